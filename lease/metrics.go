package lease

import "github.com/prometheus/client_golang/prometheus"

// Metrics counts lease transitions. One Metrics is shared by every Locker of a process, because a Registerer accepts
// each metric name once.
type Metrics struct {
	acquire  *prometheus.CounterVec
	renew    *prometheus.CounterVec
	release  *prometheus.CounterVec
	lost     *prometheus.CounterVec
	fence    *prometheus.CounterVec
	announce *prometheus.CounterVec
	held     prometheus.Gauge
	latency  prometheus.Histogram
}

// Outcome label values. They are a closed set so that the metrics stay bounded.
const (
	outcomeAcquired  = "acquired"
	outcomeHeld      = "held"
	outcomeError     = "error"
	outcomeRenewed   = "renewed"
	outcomeLost      = "lost"
	outcomeReleased  = "released"
	outcomeExpired   = "expired"
	outcomeAdmitted  = "admitted"
	outcomeStale     = "stale"
	outcomePublished = "published"
	outcomeFailed    = "failed"
	outcomeDropped   = "dropped"
)

// NewMetrics creates the lease metrics and registers them with reg. A nil reg gives working metrics that nobody
// scrapes, which is what a Locker uses when Options.Metrics is nil, so the code never checks for nil.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "hub", Subsystem: "lease", Name: name + "_total", Help: help,
		}, []string{"outcome"})
	}
	m := &Metrics{
		acquire:  counter("acquire", "Acquisition attempts by outcome (acquired, held by another, error)."),
		renew:    counter("renew", "Watchdog renewals by outcome (renewed, lost, error)."),
		release:  counter("release", "Releases by outcome (released, expired before release, error)."),
		lost:     counter("lost", "Leases that ended without a release, by outcome (lost to another holder, expired)."),
		fence:    counter("fence", "Fenced operations by outcome (admitted, stale token rejected, error)."),
		announce: counter("announce", "Lock events by outcome (published, failed, dropped because the queue was full)."),
		held: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "hub", Subsystem: "lease", Name: "held", Help: "Leases currently held by this process.",
		}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "hub", Subsystem: "lease", Name: "release_seconds",
			Help:    "Time Release takes: stopping the watchdog and the compare-and-delete.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 14), // 100µs .. ~0.8s
		}),
	}
	// Touch every label so dashboards show zeros instead of missing series.
	for _, o := range []string{outcomeAcquired, outcomeHeld, outcomeError} {
		m.acquire.WithLabelValues(o)
	}
	for _, o := range []string{outcomeRenewed, outcomeLost, outcomeError} {
		m.renew.WithLabelValues(o)
	}
	for _, o := range []string{outcomeReleased, outcomeExpired, outcomeError} {
		m.release.WithLabelValues(o)
	}
	for _, o := range []string{outcomeLost, outcomeExpired} {
		m.lost.WithLabelValues(o)
	}
	for _, o := range []string{outcomeAdmitted, outcomeStale, outcomeError} {
		m.fence.WithLabelValues(o)
	}
	for _, o := range []string{outcomePublished, outcomeFailed, outcomeDropped} {
		m.announce.WithLabelValues(o)
	}
	if reg != nil {
		reg.MustRegister(m.acquire, m.renew, m.release, m.lost, m.fence, m.announce, m.held, m.latency)
	}
	return m
}
