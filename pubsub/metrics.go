package pubsub

import "github.com/prometheus/client_golang/prometheus"

type subscriberMetrics struct {
	up              prometheus.Gauge
	followed        prometheus.Gauge
	receiveErrors   prometheus.Counter
	overflows       prometheus.Counter
	resubscriptions prometheus.Counter
	gaps            prometheus.Counter
	repairs         prometheus.Counter
}

func newSubscriberMetrics(reg prometheus.Registerer) *subscriberMetrics {
	m := &subscriberMetrics{
		up: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "hub_redis_pubsub_up", Help: "1 while the Redis pub/sub connection answers.",
		}),
		followed: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "hub_redis_followed_topics", Help: "Topics whose live channel this hub is subscribed to.",
		}),
		receiveErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hub_redis_receive_errors_total", Help: "Errors reading the pub/sub connection (each one is followed by a reconnect).",
		}),
		overflows: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hub_redis_queue_overflows_total", Help: "Live messages dropped from a full processing queue; each is read back from the stream.",
		}),
		resubscriptions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hub_redis_resubscriptions_total", Help: "Topic subscriptions confirmed again on a new pub/sub connection.",
		}),
		gaps: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hub_redis_gaps_total", Help: "Gaps noticed: an envelope whose prev was not the last id delivered, or a stream end beyond it.",
		}),
		repairs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hub_redis_gap_repairs_total", Help: "Repairs that read missed events back from a stream and delivered them.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.up, m.followed, m.receiveErrors, m.overflows, m.resubscriptions, m.gaps, m.repairs)
	}
	return m
}
