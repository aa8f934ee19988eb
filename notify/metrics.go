package notify

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Delivery outcomes, the label values of hub_notify_deliveries_total.
const (
	outcomeDelivered = "delivered"
	outcomeRetried   = "retried"
	outcomeRefused   = "refused"
	outcomeDead      = "dead"
)

// Reasons a notification is dropped, the label values of hub_notify_dropped_total.
const (
	dropFull      = "outbox_full" // the outbox and retry set held notify.max_pending deliveries
	dropRetryFull = "retry_full"  // a failed delivery found the retry set full, and was dead-lettered
)

// Metrics are the dispatcher's figures.
type Metrics struct {
	deliveries *prometheus.CounterVec
	pending    prometheus.Gauge
	dropped    *prometheus.CounterVec
	coalesced  prometheus.Counter
	truncated  prometheus.Counter
}

// NewMetrics creates the dispatcher's metrics and registers them with reg when it is not nil.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	f := promauto.With(reg)
	m := &Metrics{
		deliveries: f.NewCounterVec(prometheus.CounterOpts{
			Name: "hub_notify_deliveries_total",
			Help: "Webhook delivery tries by outcome: delivered, retried (failed, tried again later), refused (4xx, not retried), dead (given up).",
		}, []string{"outcome"}),
		pending: f.NewGauge(prometheus.GaugeOpts{
			Name: "hub_notify_pending",
			Help: "Webhook deliveries queued or waiting for a retry, across the replicas (refreshed every 5 s).",
		}),
		dropped: f.NewCounterVec(prometheus.CounterOpts{
			Name: "hub_notify_dropped_total",
			Help: "Webhook deliveries dropped at notify.max_pending, by reason: outbox_full (not queued), retry_full (failed, dead-lettered without retry).",
		}, []string{"reason"}),
		coalesced: f.NewCounter(prometheus.CounterOpts{
			Name: "hub_notify_coalesced_total",
			Help: "Webhook deliveries folded into one still waiting for the same webhook, kind and topic.",
		}),
		truncated: f.NewCounter(prometheus.CounterOpts{
			Name: "hub_notify_data_truncated_total",
			Help: "Notifications whose workflow data was cut to notify.max_data_bytes.",
		}),
	}
	for _, r := range []string{dropFull, dropRetryFull} {
		m.dropped.WithLabelValues(r)
	}
	for _, o := range []string{outcomeDelivered, outcomeRetried, outcomeRefused, outcomeDead} {
		m.deliveries.WithLabelValues(o)
	}
	return m
}

func (m *Metrics) outcome(o string) { m.deliveries.WithLabelValues(o).Inc() }
