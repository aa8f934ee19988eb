package bench

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// TopicsReport is the topics scenario's part of a Result.
type TopicsReport struct {
	Topics         int          `json:"topics"`
	EventsPerTopic int          `json:"events_per_topic"`
	ChurnAsked     float64      `json:"churn_asked_per_s"`
	Idle           *RedisPhase  `json:"idle"`
	Load           *RedisPhase  `json:"load"`
	Churn          *ChurnReport `json:"churn,omitempty"`
	// CPUPerDeliveryUs is the hub's CPU time over the load phase (publishing, churn and drain) per delivery.
	CPUPerDeliveryUs float64 `json:"hub_cpu_us_per_delivery"`
	// RedisCPUPerEventUs is Redis's CPU time over the load phase per event published (the churn's included).
	RedisCPUPerEventUs float64 `json:"redis_cpu_us_per_event"`
	publishedAt        time.Time
}

// ChurnReport counts the churn's cycles: each a topic gaining its only client and losing it.
type ChurnReport struct {
	Asked   float64  `json:"asked_per_s"`
	Topics  int      `json:"topics"`
	Cycles  int      `json:"cycles"`
	Skipped int      `json:"skipped"` // due while the topic of their turn still had its previous cycle's client
	Check   Check    `json:"check"`
	Each    *Latency `json:"open_to_done"`
}

// results totals the clients' verdicts and the phases' figures.
func (r *topicsRun) results(res *Result, cl *topicsClients, ch *topicsChurn) {
	tr := res.Topics
	var last time.Time
	for i, c := range cl.clients {
		res.Deliveries += c.received
		last = maxTime(last, c.last)
		if c.err != nil || c.opened.IsZero() {
			res.Check.Failed++
		}
		res.Check.Duplicated += c.dups
		res.Check.OutOfOrder += c.disorder
		res.Check.Resets += c.resets
		res.Check.Lost += c.lost(r.ok[cl.topic[i]])
	}
	if !last.IsZero() {
		res.DeliveriesPS = float64(res.Deliveries) / last.Sub(tr.publishedAt).Seconds()
	}
	s := r.lat.summary()
	res.Latency = &s
	if tr.Churn = ch.report(); tr.Churn != nil {
		c := tr.Churn.Check
		res.Check.Lost += c.Lost
		res.Check.Duplicated += c.Duplicated
		res.Check.OutOfOrder += c.OutOfOrder
		res.Check.Resets += c.Resets
		res.Check.Failed += c.Failed
	}
	if res.Deliveries > 0 && res.Proc != nil {
		tr.CPUPerDeliveryUs = res.Proc.CPUSeconds * 1e6 / float64(res.Deliveries)
	}
	if ld := tr.Load; ld != nil && ld.PerSecond["evalsha"]+ld.PerSecond["eval"] > 0 {
		tr.RedisCPUPerEventUs = ld.RedisCPU / 100 * 1e6 / (ld.PerSecond["evalsha"] + ld.PerSecond["eval"])
	}
}

// rows prints the report's lines through row.
func (tr *TopicsReport) rows(conns int, row func(k, format string, args ...any)) {
	row("topics", "%d, %.1f clients each, %d events each", tr.Topics, float64(conns)/float64(tr.Topics), tr.EventsPerTopic)
	if c := tr.Churn; c != nil {
		row("churn", "%d cycles (%.0f/s asked over %d topics, %d skipped: topic still busy); open→done %v",
			c.Cycles, c.Asked, c.Topics, c.Skipped, c.Each)
		row("churn check", "lost %d, duplicated %d, out of order %d, resets %d, cycles failed %d",
			c.Check.Lost, c.Check.Duplicated, c.Check.OutOfOrder, c.Check.Resets, c.Check.Failed)
	}
	if tr.CPUPerDeliveryUs > 0 {
		row("hub CPU per delivery", "%.2f µs", tr.CPUPerDeliveryUs)
	}
	if ph := tr.Idle; ph != nil {
		row("idle", "%.0f s: hub %.2f %% of a core, Redis %.2f %%", ph.Seconds, ph.HubCPUPercent, ph.RedisCPU)
		row("idle: live feed", "%.1f commands/s = %.3f per topic per minute (tail checks, subscriptions, pings)",
			ph.SubscriberPS, ph.PerTopicMinute)
		row("idle: other", "%.1f commands/s = %.3f per topic per minute (the workflow sweeper's and the rest)",
			ph.OtherPS, ph.OtherPerTopic)
		row("idle commands/s", "%s", ph.commands())
	}
	if ph := tr.Load; ph != nil {
		row("load: Redis", "%.1f %% of a core, %.1f µs CPU per event; live feed's commands %.1f/s, others %.1f/s (script's left out)",
			ph.RedisCPU, tr.RedisCPUPerEventUs, ph.SubscriberPS, ph.OtherPS)
		row("load commands/s", "%s", ph.commands())
	}
}

// commands is "evalsha 4012 (41.2 µs), xread 3.1 (5.0 µs), …", busiest first.
func (ph *RedisPhase) commands() string {
	names := slices.SortedFunc(maps.Keys(ph.PerSecond), func(a, b string) int {
		if ph.PerSecond[a] != ph.PerSecond[b] {
			if ph.PerSecond[a] > ph.PerSecond[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	if len(names) == 0 {
		return "none"
	}
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %.1f (%.1f µs)", n, ph.PerSecond[n], ph.UsecPerCall[n])
	}
	return strings.Join(parts, ", ")
}
