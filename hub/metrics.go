package hub

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Metrics are the hub's own figures: what reaches it and what it replays. Evictions are counted where the stream
// ends (sse's closed-by-reason counter) and refused events where they are decoded (pubsub), each once. NewMetrics(nil)
// gives working but unregistered metrics, so code never checks for nil.
type Metrics struct {
	received      map[Source]prometheus.Counter
	subscriptions prometheus.Gauge
	replayEvents  prometheus.Histogram
	replaySeconds prometheus.Histogram
}

// NewMetrics creates the hub's metrics and registers them with reg when it is not nil.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	f := promauto.With(reg)
	received := f.NewCounterVec(prometheus.CounterOpts{
		Name: "hub_events_received_total",
		Help: "Events that reached the hub, by source: live (pub/sub), repair (read back to fill a gap), replay (read for a reconnecting client), ephemeral (no envelope).",
	}, []string{"source"})
	m := &Metrics{
		received: map[Source]prometheus.Counter{},
		subscriptions: f.NewGauge(prometheus.GaugeOpts{
			Name: "hub_subscriptions",
			Help: "Subscriptions currently registered in the hub.",
		}),
		replayEvents: f.NewHistogram(prometheus.HistogramOpts{
			Name:    "hub_replay_events",
			Help:    "Events replayed per topic to one resuming client.",
			Buckets: []float64{0, 1, 10, 100, 1000, 10000, 100000},
		}),
		replaySeconds: f.NewHistogram(prometheus.HistogramOpts{
			Name:    "hub_replay_duration_seconds",
			Help:    "Time to replay one topic to one resuming client.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 9),
		}),
	}
	for _, s := range []Source{SourceLive, SourceRepair, SourceReplay, SourceEphemeral} {
		m.received[s] = received.WithLabelValues(string(s))
	}
	return m
}
