package lease

import "github.com/prometheus/client_golang/prometheus"

// Metrics counts lease transitions. One Metrics is shared by every Locker of a process, because a Registerer accepts
// each metric name once. The series are named <namespace>_lease_<name>: the namespace is the process's own (the hub's
// demo agents use "hub"; an agent uses its name), since a lease is taken by an agent, not by the hub.
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
	reasonTaken      = "taken" // lost_total: another holder has the key
	// acquire_total: granted, but fewer replicas than Options.MinReplicas acknowledged it in time, so undone.
	outcomeUnreplicated = "unreplicated"
)

// NewMetrics creates the lease metrics, named <namespace>_lease_... ("lease_..." for an empty namespace), and
// registers them with reg. A nil reg gives working metrics that nobody scrapes, which is what a Locker uses when
// Options.Metrics is nil, so the code never checks for nil.
func NewMetrics(reg prometheus.Registerer, namespace string) *Metrics {
	counter := func(name, label, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "lease", Name: name + "_total", Help: help,
		}, []string{label})
	}
	m := &Metrics{
		acquire:  counter("acquire", "outcome", "Acquisition attempts by outcome (acquired, held by another, unreplicated and undone, error)."),
		renew:    counter("renew", "outcome", "Watchdog renewals by outcome (renewed, lost, error)."),
		release:  counter("release", "outcome", "Releases by outcome (released, expired before release, error)."),
		lost:     counter("lost", "reason", "Leases that ended without a release, by reason (taken by another holder, expired)."),
		fence:    counter("fence", "outcome", "Fenced operations by outcome (admitted, stale token rejected, error)."),
		announce: counter("announce", "outcome", "Lock events by outcome (published, failed, dropped because the queue was full)."),
		held: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Subsystem: "lease", Name: "held", Help: "Leases currently held by this process.",
		}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: namespace, Subsystem: "lease", Name: "release_duration_seconds",
			Help:    "Time Release takes: stopping the watchdog and the compare-and-delete.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 14), // 100µs .. ~0.8s
		}),
	}
	// Touch every label so dashboards show zeros instead of missing series.
	for _, o := range []string{outcomeAcquired, outcomeHeld, outcomeUnreplicated, outcomeError} {
		m.acquire.WithLabelValues(o)
	}
	for _, o := range []string{outcomeRenewed, outcomeLost, outcomeError} {
		m.renew.WithLabelValues(o)
	}
	for _, o := range []string{outcomeReleased, outcomeExpired, outcomeError} {
		m.release.WithLabelValues(o)
	}
	for _, r := range []string{reasonTaken, outcomeExpired} {
		m.lost.WithLabelValues(r)
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
