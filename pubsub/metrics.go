package pubsub

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/syncverse/hub/hub"
)

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
	f := promauto.With(reg)
	m := &subscriberMetrics{
		up: f.NewGauge(prometheus.GaugeOpts{
			Name: "hub_redis_pubsub_up", Help: "1 while the Redis pub/sub connection answers.",
		}),
		followed: f.NewGauge(prometheus.GaugeOpts{
			Name: "hub_redis_followed_topics", Help: "Topics whose live channel this hub is subscribed to.",
		}),
		receiveErrors: f.NewCounter(prometheus.CounterOpts{
			Name: "hub_redis_receive_errors_total", Help: "Errors reading the pub/sub connection (each one is followed by a reconnect).",
		}),
		overflows: f.NewCounter(prometheus.CounterOpts{
			Name: "hub_redis_queue_overflows_total", Help: "Live messages dropped from a full processing queue; each is read back from the stream.",
		}),
		resubscriptions: f.NewCounter(prometheus.CounterOpts{
			Name: "hub_redis_resubscriptions_total", Help: "Topic subscriptions confirmed again on a new pub/sub connection.",
		}),
		gaps: f.NewCounter(prometheus.CounterOpts{
			Name: "hub_redis_gaps_total", Help: "Gaps noticed: an envelope whose prev was not the last id delivered, or a stream end beyond it.",
		}),
		repairs: f.NewCounter(prometheus.CounterOpts{
			Name: "hub_redis_gap_repairs_total", Help: "Repairs that read missed events back from a stream and delivered them.",
		}),
	}
	return m
}

// Publish outcomes: the values of hub_publish_total's outcome label.
const (
	outcomeOK        = "ok"
	outcomeDuplicate = "duplicate"
	outcomeInvalid   = "invalid"
	outcomeTooLarge  = "too_large"
	outcomeFailed    = "failed"
	outcomeConflict  = "conflict"
)

// PublishMetrics counts what Publishers answered. Make one per registry and share it among a process's Publishers.
type PublishMetrics struct {
	total   *prometheus.CounterVec
	retried *prometheus.CounterVec
	waited  prometheus.Histogram
	// duration times the publish script's round trips, from the first attempt to the answer; a refused event
	// never reaches Redis and is not timed.
	duration *prometheus.HistogramVec
}

// NewPublishMetrics registers the publish metrics with reg; a nil reg keeps them unregistered.
func NewPublishMetrics(reg prometheus.Registerer) *PublishMetrics {
	f := promauto.With(reg)
	m := &PublishMetrics{
		total: f.NewCounterVec(prometheus.CounterOpts{
			Name: "hub_publish_total", Help: "Publishes through the script, by outcome (ok, duplicate: an idempotency key seen before, conflict: a key seen before with other content, invalid, too_large, failed).",
		}, []string{"outcome"}),
		retried: f.NewCounterVec(prometheus.CounterOpts{
			Name: "hub_publish_retried_total", Help: "Publishes with an idempotency key that needed at least one retry, by outcome (ok, duplicate, failed).",
		}, []string{"outcome"}),
		waited: f.NewHistogram(prometheus.HistogramOpts{
			Name: "hub_publish_retry_seconds", Help: "How long a retried publish took from its first attempt to its answer.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2, 3, 5, 10},
		}),
		duration: f.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "hub_publish_duration_seconds",
			Help:    "Time the publish script takes, from the call to Redis' answer (retries included), by outcome (ok, error).",
			Buckets: prometheus.ExponentialBuckets(0.00025, 2, 14), // 250µs .. ~2s
		}, []string{"outcome"}),
	}
	m.duration.WithLabelValues("ok")
	m.duration.WithLabelValues("error")
	for _, o := range []string{outcomeOK, outcomeDuplicate, outcomeConflict, outcomeInvalid, outcomeTooLarge, outcomeFailed} {
		m.total.WithLabelValues(o)
	}
	for _, o := range []string{outcomeOK, outcomeDuplicate, outcomeFailed} {
		m.retried.WithLabelValues(o)
	}
	return m
}

// dropMetrics counts events refused where they are decoded: the Store reads every stream entry and, through the
// Subscriber, every live message.
type dropMetrics struct{ dropped *prometheus.CounterVec }

func newDropMetrics(reg prometheus.Registerer) dropMetrics {
	f := promauto.With(reg)
	m := dropMetrics{dropped: f.NewCounterVec(prometheus.CounterOpts{
		Name: "hub_events_dropped_total",
		Help: "Events refused before reaching any client, by reason (bad_envelope, bad_type, invalid_json, too_large, bad_entry, reserved_type).",
	}, []string{"reason"})}
	for _, r := range dropReasons {
		m.dropped.WithLabelValues(r)
	}
	return m
}

func publishOutcome(res Result, err error) string {
	switch {
	case err == nil && res.Duplicate:
		return outcomeDuplicate
	case err == nil:
		return outcomeOK
	case errors.Is(err, ErrConflict):
		return outcomeConflict
	case errors.Is(err, ErrTooLarge):
		return outcomeTooLarge
	case errors.Is(err, ErrInvalid), errors.Is(err, hub.ErrBadTopic), errors.Is(err, hub.ErrBadType):
		return outcomeInvalid
	default:
		return outcomeFailed
	}
}

func (m *PublishMetrics) done(res Result, err error) {
	m.total.WithLabelValues(publishOutcome(res, err)).Inc()
}

// took times a publish that reached Redis.
func (m *PublishMetrics) took(d time.Duration, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	m.duration.WithLabelValues(outcome).Observe(d.Seconds())
}

func (m *PublishMetrics) retriedFor(d time.Duration, res Result, err error) {
	o := publishOutcome(res, err)
	if o != outcomeOK && o != outcomeDuplicate {
		o = outcomeFailed
	}
	m.retried.WithLabelValues(o).Inc()
	m.waited.Observe(d.Seconds())
}
