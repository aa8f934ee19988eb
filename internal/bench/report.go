package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/syncverse/hub/internal/progress"
)

// histogram records durations in microseconds with about 3 % precision, lock-free, so thousands of clients can
// share one.
type histogram struct {
	buckets [64 + 40*32]atomic.Uint64
	max     atomic.Int64
	count   atomic.Uint64
}

func (h *histogram) add(ns int64) {
	ns = max(ns, 0)
	for m := h.max.Load(); ns > m && !h.max.CompareAndSwap(m, ns); m = h.max.Load() {
	}
	h.count.Add(1)
	h.buckets[bucketOf(uint64(ns/1000))].Add(1)
}

func bucketOf(us uint64) int {
	if us < 64 {
		return int(us)
	}
	e := bits.Len64(us) - 6
	return min(64+(e-1)*32+int(us>>e)-32, 64+40*32-1)
}

// lowest returns the smallest value, in microseconds, of bucket i.
func lowest(i int) uint64 {
	if i < 64 {
		return uint64(i)
	}
	e := (i-64)/32 + 1
	return uint64((i-64)%32+32) << e
}

// quantile returns the q-quantile (0 < q ≤ 1), as the middle of the bucket it falls in.
func (h *histogram) quantile(q float64) time.Duration {
	n := h.count.Load()
	if n == 0 {
		return 0
	}
	rank := uint64(q*float64(n) + 0.5)
	rank = max(rank, 1)
	var seen uint64
	for i := range h.buckets {
		seen += h.buckets[i].Load()
		if seen >= rank {
			lo, hi := lowest(i), lowest(i+1)
			d := time.Duration((lo+hi)/2) * time.Microsecond
			return min(d, time.Duration(h.max.Load()))
		}
	}
	return time.Duration(h.max.Load())
}

// Latency summarises a histogram.
type Latency struct {
	P50 Millis `json:"p50_ms"`
	P90 Millis `json:"p90_ms"`
	P99 Millis `json:"p99_ms"`
	Max Millis `json:"max_ms"`
}

func (h *histogram) summary() Latency {
	return Latency{P50: ms(h.quantile(.5)), P90: ms(h.quantile(.9)), P99: ms(h.quantile(.99)), Max: ms(time.Duration(h.max.Load()))}
}

func (l Latency) String() string {
	return fmt.Sprintf("p50 %v  p90 %v  p99 %v  max %v ms", l.P50, l.P90, l.P99, l.Max)
}

// Millis is a duration in milliseconds, printed with enough digits for sub-millisecond figures.
type Millis float64

func ms(d time.Duration) Millis { return Millis(float64(d.Microseconds()) / 1000) }

func (m Millis) String() string {
	switch {
	case m >= 100:
		return fmt.Sprintf("%.0f", float64(m))
	case m >= 10:
		return fmt.Sprintf("%.1f", float64(m))
	}
	return fmt.Sprintf("%.2f", float64(m))
}

// medianMs returns the median of ds in milliseconds.
func medianMs(ds []time.Duration) Millis {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return ms(s[len(s)/2])
}

// Check is the verdict on deliveries; any non-zero count fails the run.
type Check struct {
	Lost       int `json:"lost"`
	Duplicated int `json:"duplicated"`
	OutOfOrder int `json:"out_of_order"`
	Resets     int `json:"resets"`
	Failed     int `json:"clients_failed"`
}

func (c Check) ok() bool { return c == Check{} }

// Proc is what /proc says about the hub process over a phase.
type Proc struct {
	RSSBeforeMiB  float64 `json:"rss_before_mib"`
	RSSAfterMiB   float64 `json:"rss_after_mib"`
	RSSPerConnKiB float64 `json:"rss_per_conn_kib,omitempty"`
	// RSSHeldPerConnKiB is RSS per connection at the end of an idle hold: once the Go runtime has returned to the
	// system what the connect burst left over, it is what holding the connections costs.
	RSSHeldPerConnKiB float64 `json:"rss_held_per_conn_kib,omitempty"`
	HeapPerConnKB     float64 `json:"heap_per_conn_kib,omitempty"`
	StackPerConnK     float64 `json:"stack_per_conn_kib,omitempty"`
	CPUPercent        float64 `json:"cpu_percent_of_one_core"`
	CPUSeconds        float64 `json:"cpu_seconds,omitempty"` // the hub's CPU time over the measured phase
	BenchCPU          float64 `json:"bench_cpu_percent_of_one_core"`
	Writes            int64   `json:"write_syscalls"`
}

// Result is one scenario's figures.
type Result struct {
	Scenario    string  `json:"scenario"`
	Target      string  `json:"target,omitempty"` // floor: the figures labelled hub are the floor server's
	Conns       int     `json:"conns,omitempty"`
	Events      int     `json:"events,omitempty"`
	Published   int     `json:"published,omitempty"`
	Rate        float64 `json:"rate_per_s,omitempty"`
	PayloadSize int     `json:"payload_bytes,omitempty"`

	ConnectAll  Millis   `json:"connect_all_ms,omitempty"`
	ConnectEach *Latency `json:"connect_each,omitempty"`

	Deliveries    int      `json:"deliveries,omitempty"`
	DeliveriesPS  float64  `json:"deliveries_per_s,omitempty"`
	PublishedPS   float64  `json:"published_per_s,omitempty"`
	Latency       *Latency `json:"latency,omitempty"`
	Heartbeats    int64    `json:"heartbeats,omitempty"`
	Replayed      int      `json:"replayed_per_client,omitempty"`
	FirstReplayed Millis   `json:"first_replayed_ms,omitempty"`
	LastReplayed  Millis   `json:"last_replayed_ms,omitempty"`
	AllDone       Millis   `json:"all_done_ms,omitempty"`
	EachDone      *Latency `json:"each_done,omitempty"`

	Proc   *Proc         `json:"hub_proc,omitempty"`
	Topics *TopicsReport `json:"topics,omitempty"`
	Flood  *FloodReport  `json:"flood,omitempty"`
	Check  Check         `json:"check"`
}

// writeJSON writes v as indented JSON, the form of --json.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// table starts a two-column table on w: row writes a name and its formatted value; flush the writer at the end.
func table(w io.Writer) (*tabwriter.Writer, func(k, format string, args ...any)) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	return tw, func(k, format string, args ...any) {
		fmt.Fprintf(tw, "%s\t"+format+"\n", append([]any{k}, args...)...)
	}
}

func (r *Result) print(w io.Writer, asJSON bool) error {
	if asJSON {
		return writeJSON(w, r)
	}
	tw, row := table(w)
	row("scenario", "%s", r.Scenario)
	if r.Target == "floor" {
		row("target", "the floor: a minimal Redis-to-SSE server (no history, replay, heartbeats or checks); the rows named hub are its figures")
	}
	if r.Conns > 0 {
		row("connections", "%d", r.Conns)
	}
	if r.Events > 0 {
		pace := "as fast as possible"
		if r.Rate > 0 {
			pace = fmt.Sprintf("%.0f/s asked", r.Rate)
		}
		row("events", "%d published of %d (%d B payload, %s)", r.Published, r.Events, r.PayloadSize, pace)
	}
	if r.ConnectEach != nil {
		row("connect", "all open in %v ms; each %v", r.ConnectAll, r.ConnectEach)
	}
	if r.PublishedPS > 0 {
		row("publish rate", "%.0f events/s", r.PublishedPS)
	}
	if r.Deliveries > 0 {
		row("deliveries", "%d (%.0f/s)", r.Deliveries, r.DeliveriesPS)
	}
	if r.Latency != nil {
		row("publish→receive", "%v", r.Latency)
	}
	switch {
	case r.Scenario == "replay-hog":
		row("replay", "%d events to %d clients that do not read and one that does, done after %v ms", r.Replayed, r.Conns, r.LastReplayed)
	case r.Replayed > 0:
		row("replay", "%d events: first after %v ms, last after %v ms (medians)", r.Replayed, r.FirstReplayed, r.LastReplayed)
	}
	if r.EachDone != nil {
		row("all clients done", "%v ms; each %v", r.AllDone, r.EachDone)
	}
	if r.Heartbeats > 0 {
		row("heartbeats", "%d received", r.Heartbeats)
	}
	if p := r.Proc; p != nil {
		if r.Scenario == "replay-hog" {
			row("hub RSS", "%.1f MiB before, %.1f MiB at the peak (+%.1f MiB)", p.RSSBeforeMiB, p.RSSAfterMiB, p.RSSAfterMiB-p.RSSBeforeMiB)
		} else if p.RSSAfterMiB > 0 {
			row("hub RSS", "%.1f MiB before, %.1f MiB after (%.1f KiB per connection)", p.RSSBeforeMiB, p.RSSAfterMiB, p.RSSPerConnKiB)
		}
		if p.RSSHeldPerConnKiB > 0 {
			row("hub RSS held", "%.1f KiB per connection at the end of the hold", p.RSSHeldPerConnKiB)
		}
		if p.HeapPerConnKB > 0 || p.StackPerConnK > 0 {
			row("hub Go memory", "%.1f KiB heap + %.1f KiB stack per connection", p.HeapPerConnKB, p.StackPerConnK)
		}
		row("hub CPU", "%.1f %% of one core (bench itself: %.1f %%)", p.CPUPercent, p.BenchCPU)
		if p.Writes > 0 && r.Deliveries > 0 {
			row("hub writes", "%d write calls, %.2f deliveries each", p.Writes, float64(r.Deliveries)/float64(p.Writes))
		}
		if p.CPUSeconds > 0 && r.Deliveries > 0 {
			row("hub CPU time", "%.2f s, %.2f µs per delivery", p.CPUSeconds, p.CPUSeconds*1e6/float64(r.Deliveries))
		}
	}
	if r.Topics != nil {
		r.Topics.rows(r.Conns, row)
	}
	if r.Flood != nil {
		r.Flood.rows(row)
	}
	c := r.Check
	verdict := "ok"
	if !c.ok() {
		verdict = "FAILED"
	}
	row("check", "%s: lost %d, duplicated %d, out of order %d, resets %d, clients failed %d",
		verdict, c.Lost, c.Duplicated, c.OutOfOrder, c.Resets, c.Failed)
	return tw.Flush()
}

// progressEvery is how often the progress line is redrawn.
const progressEvery = 250 * time.Millisecond

// meter is the run so far, for the progress line: clients and publishers count into it as they go, the line reads
// it. A nil meter counts nothing.
type meter struct {
	open, sent, got, bad atomic.Int64
}

func (m *meter) opened() {
	if m != nil {
		m.open.Add(1)
	}
}

func (m *meter) published() {
	if m != nil {
		m.sent.Add(1)
	}
}

func (m *meter) delivered() {
	if m != nil {
		m.got.Add(1)
	}
}

// violation is a delivery that came twice or out of order.
func (m *meter) violation() {
	if m != nil {
		m.bad.Add(1)
	}
}

// line is "fanout 0:04 / ~0:10  conns 1000/1000  published 800/2000  delivered 800k  violations 0".
func (m *meter) line(o *options, elapsed time.Duration) string {
	var expected time.Duration
	target := o.events
	switch o.scenario {
	case "fanout", "publish", "topics":
		if o.rate > 0 {
			expected = time.Duration(float64(o.events) / o.rate * float64(time.Second))
		}
	case "idle":
		expected, target = o.hold, 0
	case "storm":
		target = o.replay
	case "replay":
		target = o.replay * o.repeat
	default:
		target = 0
	}
	sent := fmt.Sprint(m.sent.Load())
	if target > 0 {
		sent += fmt.Sprintf("/%d", target)
	}
	s := o.scenario + " " + progress.Clock(elapsed, expected)
	if o.scenario != "publish" {
		s += fmt.Sprintf("  conns %d/%d", m.open.Load(), o.conns)
	}
	return s + fmt.Sprintf("  published %s  delivered %s  violations %d", sent, count(m.got.Load()), m.bad.Load())
}

// count is n in at most four digits and a suffix: 999, 12.3k, 4.5M.
func count(n int64) string {
	switch {
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1e4:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}
