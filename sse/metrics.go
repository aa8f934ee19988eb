package sse

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Metrics are the stream figures. NewMetrics(nil) gives working but unregistered metrics.
type Metrics struct {
	active     prometheus.Gauge
	opened     prometheus.Counter
	closed     *prometheus.CounterVec
	rejected   *prometheus.CounterVec
	heartbeats prometheus.Counter
	delivered  prometheus.Counter
	written    prometheus.Counter
	latency    prometheus.Histogram
}

// rejectStatuses are the refusals the handler decides itself; Config.Authorize's are counted by the authorizer.
var rejectStatuses = []string{"400", "405", "503"}

// NewMetrics creates the stream metrics and registers them with reg when it is not nil.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	f := promauto.With(reg)
	m := &Metrics{
		active: f.NewGauge(prometheus.GaugeOpts{
			Name: "hub_sse_connections_active", Help: "Open SSE streams.",
		}),
		opened: f.NewCounter(prometheus.CounterOpts{
			Name: "hub_sse_connections_opened_total", Help: "SSE streams opened.",
		}),
		closed: f.NewCounterVec(prometheus.CounterOpts{
			Name: "hub_sse_connections_closed_total", Help: "SSE streams closed, by reason (client_gone, slow: evicted for a full buffer, shutdown, write_error, token_expired).",
		}, []string{"reason"}),
		rejected: f.NewCounterVec(prometheus.CounterOpts{
			Name: "hub_sse_requests_rejected_total", Help: "/events requests the stream handler refused before streaming, by HTTP status (400 bad request, 405, 503 shutting down); auth and limit refusals are in hub_http_rejected_total.",
		}, []string{"status"}),
		heartbeats: f.NewCounter(prometheus.CounterOpts{
			Name: "hub_sse_heartbeats_total", Help: "Heartbeat comments written to silent streams.",
		}),
		delivered: f.NewCounter(prometheus.CounterOpts{
			Name: "hub_events_delivered_total", Help: "Events written to SSE clients (one per client per event).",
		}),
		written: f.NewCounter(prometheus.CounterOpts{
			Name: "hub_sse_written_bytes_total", Help: "Bytes written to SSE streams: frames, heartbeats and, for raw HTTP/1.1 streams, chunk framing.",
		}),
		latency: f.NewHistogram(prometheus.HistogramOpts{
			Name:    "hub_delivery_latency_seconds",
			Help:    "From publish (the stream id's Redis time) to the write to a client, for live events.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}),
	}
	for _, r := range []CloseReason{CloseClientGone, CloseSlow, CloseShutdown, CloseWriteError, CloseTokenExpired} {
		m.closed.WithLabelValues(string(r))
	}
	for _, s := range rejectStatuses {
		m.rejected.WithLabelValues(s)
	}
	return m
}
