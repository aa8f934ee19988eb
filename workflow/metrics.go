package workflow

import (
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/syncverse/hub/hub"
)

// Metrics are the sweeper's figures. By default they carry no topic or workflow label; topics covered by one of
// the patterns given to NewMetrics are counted under their own topic label as well.
type Metrics struct {
	workflows *prometheus.GaugeVec
	verdicts  *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	sweep     prometheus.Histogram
	// the ceilings on the state
	trimmed    *prometheus.CounterVec
	stateBytes prometheus.Gauge
	deferred   prometheus.Counter
	topics     []string
}

// Statuses counted by hub_workflows.
var gaugeStatuses = [...]string{StatusQueued, StatusRunning, Stalled, StatusSucceeded, StatusFailed, StatusCancelled}

// NewMetrics creates the sweeper's metrics and registers them with reg when it is not nil. topicPatterns is
// workflows.metric_topics.
func NewMetrics(reg prometheus.Registerer, topicPatterns []string) *Metrics {
	f := promauto.With(reg)
	labels := []string{"status"}
	if len(topicPatterns) > 0 {
		labels = append(labels, "topic")
	}
	m := &Metrics{
		topics: topicPatterns,
		workflows: f.NewGaugeVec(prometheus.GaugeOpts{
			Name: "hub_workflows",
			Help: "Workflows the hub knows of, by status (stalled: running or queued and silent past stall_after).",
		}, labels),
		verdicts: f.NewCounterVec(prometheus.CounterOpts{
			Name: "hub_workflow_verdicts_total",
			Help: "Verdicts this hub published, by verdict (each occurrence is published by one replica).",
		}, []string{"verdict"}),
		duration: f.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "hub_workflow_duration_seconds",
			Help:    "Time from a workflow's first to its final event, by final status (observed by the replica that recorded the end).",
			Buckets: prometheus.ExponentialBuckets(1, 2, 14),
		}, []string{"status"}),
		sweep: f.NewHistogram(prometheus.HistogramOpts{
			Name:    "hub_workflow_sweep_duration_seconds",
			Help:    "Time one sweep of the workflows' health took.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 9),
		}),
		trimmed: f.NewCounterVec(prometheus.CounterOpts{
			Name: "hub_workflow_state_trimmed_total",
			Help: "Workflows deleted from the state by this replica because a ceiling was passed, by reason (topic_workflows, topic_bytes, workflows).",
		}, []string{"reason"}),
		stateBytes: f.NewGauge(prometheus.GaugeOpts{
			Name: "hub_workflow_state_bytes",
			Help: "Size in Redis of the workflow state of every topic, as this replica last read it.",
		}),
		deferred: f.NewCounter(prometheus.CounterOpts{
			Name: "hub_workflow_sweep_deferred_total",
			Help: "Topics whose changed state a sweep left to the next one, its budget of fields spent.",
		}),
	}
	for _, r := range TrimReasons {
		m.trimmed.WithLabelValues(r)
	}
	for _, v := range []string{Stalled, Recovered, Duplicate} {
		m.verdicts.WithLabelValues(v)
	}
	for _, s := range []string{StatusSucceeded, StatusFailed, StatusCancelled} {
		m.duration.WithLabelValues(s)
	}
	if len(topicPatterns) == 0 {
		for _, s := range gaugeStatuses {
			m.workflows.WithLabelValues(s)
		}
	}
	return m
}

// count sets hub_workflows from the states of one sweep. A judgement counts its state as it judges it; only a state
// touched since (a commit, a trim) is counted here again: until its judgement runs out no workflow in it changes
// status.
func (m *Metrics) count(states map[string]*TopicState, now time.Time, stallAfter func(string) time.Duration) {
	var all tally
	var labelled []*TopicState
	for _, st := range states {
		if !st.tallied {
			m.tallyOf(st, now, stallAfter(st.Topic))
		}
		if st.label != "" {
			labelled = append(labelled, st)
			continue
		}
		for i, n := range st.tally {
			all[i] += n
		}
	}
	if len(m.topics) == 0 {
		for i, s := range gaugeStatuses {
			m.workflows.WithLabelValues(s).Set(float64(all[i]))
		}
		return
	}
	m.workflows.Reset()
	for i, s := range gaugeStatuses {
		m.workflows.WithLabelValues(s, "").Set(float64(all[i]))
	}
	for _, st := range labelled {
		for i, n := range st.tally {
			if n > 0 {
				m.workflows.WithLabelValues(gaugeStatuses[i], st.label).Set(float64(n))
			}
		}
	}
}

// tally is a count of workflows by the status hub_workflows shows, in gaugeStatuses' order.
type tally [len(gaugeStatuses)]int

func (t *tally) add(status string) {
	if i := slices.Index(gaugeStatuses[:], status); i >= 0 {
		t[i]++
	}
}

// tallyOf counts the state's workflows by the status hub_workflows shows at now (a judgement counts them as it
// judges; this is for a state touched after it).
func (m *Metrics) tallyOf(st *TopicState, now time.Time, stallAfter time.Duration) {
	var t tally
	for _, w := range st.Workflows {
		t.add(gaugeStatus(now, w, stallAfter))
	}
	st.tally, st.label, st.tallied = t, m.label(st.Topic), true
}

// label is the topic label hub_workflows counts topic's workflows under: the topic when workflows.metric_topics
// names it, "" otherwise.
func (m *Metrics) label(topic string) string {
	for _, p := range m.topics {
		if hub.Match(p, topic) {
			return topic
		}
	}
	return ""
}
