// Package memtrim hands the memory of a burst of streams back to the operating system once the burst is over.
//
// A burst of connects (a hub starting under its clients, a reconnect storm after another replica went away) leaves
// pages behind that the streams no longer use: the request state of each handshake and the stacks of the handlers
// that replayed, kept by Go's runtime until its next collection and then kept again, as free heap, up to the heap
// goal (twice the live heap with GOGC=100). An idle hub allocates little, so that collection may not come for
// minutes and the free pages stay in the process's RSS for good: 14,000 streams resumed over 1,000 topics held
// 11.7 KiB each where the streams themselves need 3.8 (BENCHMARKS.md, "The fleet"). Once the churn of streams has
// been high and then falls quiet, Run collects and returns the free pages (runtime/debug.FreeOSMemory): one forced
// collection per burst, about 45 ms of one core at 14,000 streams, never during the burst itself.
package memtrim

import (
	"cmp"
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/rs/zerolog"
)

// DefaultBurst is the churn (streams opened plus streams closed) that makes a burst, for sse.trim_after_burst.
const DefaultBurst = 1000

// Config tunes Run. Zero durations mean the defaults.
type Config struct {
	Churn func() int64  // streams opened plus streams closed so far (sse.Handler.Churn)
	Burst int64         // churn since the last trim that makes a burst; 0 or less: never trim
	Quiet time.Duration // the burst is over once the churn over this long is below a tenth of Burst (default 5s)
	Every time.Duration // how often the churn is looked at (default 1s)
	Gap   time.Duration // at least this between two trims (default 1m)
	Log   zerolog.Logger
	// Metrics counts the trims; nil: not counted.
	Metrics *Metrics
	// free hands memory back; debug.FreeOSMemory unless a test sets it.
	free func()
}

// Metrics are the trimmer's Prometheus series.
type Metrics struct {
	trims    prometheus.Counter
	released prometheus.Counter
}

// NewMetrics registers the trimmer's series with reg (nil: unregistered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	f := promauto.With(reg)
	m := &Metrics{
		trims: f.NewCounter(prometheus.CounterOpts{
			Name: "hub_memory_trims_total",
			Help: "Times the hub handed free memory back to the OS after a burst of streams opening or closing.",
		}),
		released: f.NewCounter(prometheus.CounterOpts{
			Name: "hub_memory_trim_released_bytes_total",
			Help: "Heap memory returned to the OS by those trims.",
		}),
	}
	return m
}

// Run looks at the churn every cfg.Every and trims after each burst, until ctx ends; then it returns nil.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Burst <= 0 || cfg.Churn == nil {
		return nil
	}
	cfg.Quiet = cmp.Or(cfg.Quiet, 5*time.Second)
	cfg.Every = cmp.Or(cfg.Every, time.Second)
	cfg.Gap = cmp.Or(cfg.Gap, time.Minute)
	if cfg.free == nil {
		cfg.free = debug.FreeOSMemory
	}
	t := time.NewTicker(cfg.Every)
	defer t.Stop()
	w := newWatch(cfg, time.Now())
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			if w.due(cfg.Churn(), now) {
				trim(cfg, w.burst())
				w.trimmed(now)
			}
		}
	}
}

// watch decides when a burst is over from samples of the churn.
type watch struct {
	burst0  int64     // the churn at the last trim (or the start)
	last    time.Time // the last trim
	samples []int64   // the churn at each of the last Quiet/Every looks, oldest first
	cfg     Config
}

func newWatch(cfg Config, now time.Time) *watch {
	return &watch{cfg: cfg, last: now.Add(-cfg.Gap), burst0: cfg.Churn()}
}

// due records churn c seen at now and reports whether a trim is due: the churn over the last Quiet below a tenth
// of Burst, at least Burst since the churn was last quiet (or since the last trim), and Gap since the last trim.
func (w *watch) due(c int64, now time.Time) bool {
	n := max(int(w.cfg.Quiet/w.cfg.Every), 1) + 1
	w.samples = append(w.samples, c)
	if len(w.samples) > n {
		w.samples = w.samples[len(w.samples)-n:]
	}
	if len(w.samples) < n {
		return false
	}
	quiet := c-w.samples[0] < max(w.cfg.Burst/10, 1)
	if quiet && c-w.burst0 < w.cfg.Burst {
		w.burst0 = c // a small burst, over: its pages serve the next one
	}
	return quiet && c-w.burst0 >= w.cfg.Burst && now.Sub(w.last) >= w.cfg.Gap
}

func (w *watch) burst() int64 { return w.samples[len(w.samples)-1] - w.burst0 }

func (w *watch) trimmed(now time.Time) {
	w.burst0, w.last = w.samples[len(w.samples)-1], now
}

// trim hands the free memory back and says how much went.
func trim(cfg Config, churn int64) {
	before, start := heapReleased(), time.Now()
	cfg.free()
	took, released := time.Since(start), max(heapReleased()-before, 0)
	if cfg.Metrics != nil {
		cfg.Metrics.trims.Inc()
		cfg.Metrics.released.Add(float64(released))
	}
	cfg.Log.Info().Int64("churn", churn).Float64("released_mib", float64(released)/(1<<20)).
		Int64("took_ms", took.Milliseconds()).Msg("memory handed back after a burst of streams")
}

// heapReleased is the heap memory the runtime has returned to the OS and not taken back.
func heapReleased() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}
