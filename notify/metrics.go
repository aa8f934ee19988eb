package notify

import "github.com/prometheus/client_golang/prometheus"

// Delivery outcomes, the label values of hub_notify_deliveries_total.
const (
	outcomeDelivered = "delivered"
	outcomeRetried   = "retried"
	outcomeRefused   = "refused"
	outcomeDead      = "dead"
)

// Metrics are the dispatcher's figures.
type Metrics struct {
	deliveries *prometheus.CounterVec
	pending    prometheus.Gauge
}

// NewMetrics creates the dispatcher's metrics and registers them with reg when it is not nil.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hub_notify_deliveries_total",
			Help: "Webhook delivery tries by outcome: delivered, retried (failed, tried again later), refused (4xx, not retried), dead (given up).",
		}, []string{"outcome"}),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "hub_notify_pending",
			Help: "Webhook deliveries queued or waiting for a retry, across the replicas (refreshed every 5 s).",
		}),
	}
	for _, o := range []string{outcomeDelivered, outcomeRetried, outcomeRefused, outcomeDead} {
		m.deliveries.WithLabelValues(o)
	}
	if reg != nil {
		reg.MustRegister(m.deliveries, m.pending)
	}
	return m
}

func (m *Metrics) outcome(o string) { m.deliveries.WithLabelValues(o).Inc() }
