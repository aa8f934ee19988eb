package hub

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the hub's own figures. NewMetrics(nil) gives working but unregistered metrics, so code never checks
// for nil.
type Metrics struct {
	received      map[Source]prometheus.Counter
	dropped       *prometheus.CounterVec
	evicted       *prometheus.CounterVec
	subscriptions prometheus.Gauge
	replayEvents  prometheus.Histogram
	replaySeconds prometheus.Histogram
}

// NewMetrics creates the hub's metrics and registers them with reg when it is not nil.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	received := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hub_events_received_total",
		Help: "Events that reached the hub, by source: live (pub/sub), repair (read back to fill a gap), replay (read for a reconnecting client), ephemeral (no envelope).",
	}, []string{"source"})
	m := &Metrics{
		received: map[Source]prometheus.Counter{},
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hub_events_dropped_total",
			Help: "Events refused before reaching any client, by reason (invalid_json, too_large, bad_type, bad_envelope, ...).",
		}, []string{"reason"}),
		evicted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hub_clients_evicted_total",
			Help: "Subscriptions ended by the hub, by reason (slow: the client's buffer was full).",
		}, []string{"reason"}),
		subscriptions: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "hub_subscriptions",
			Help: "Subscriptions currently registered in the hub.",
		}),
		replayEvents: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "hub_replay_events",
			Help:    "Events replayed per topic to one resuming client.",
			Buckets: []float64{0, 1, 10, 100, 1000, 10000, 100000},
		}),
		replaySeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "hub_replay_seconds",
			Help:    "Time to replay one topic to one resuming client.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 9),
		}),
	}
	for _, s := range []Source{SourceLive, SourceRepair, SourceReplay, SourceEphemeral} {
		m.received[s] = received.WithLabelValues(string(s))
	}
	m.evicted.WithLabelValues(string(ReasonSlow))
	if reg != nil {
		reg.MustRegister(received, m.dropped, m.evicted, m.subscriptions, m.replayEvents, m.replaySeconds)
	}
	return m
}

// Drop counts an event refused for reason; the feeder that refused it logs it.
func (m *Metrics) Drop(reason string) { m.dropped.WithLabelValues(reason).Inc() }
