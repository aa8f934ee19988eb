package memtrim

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rs/zerolog"

	"github.com/syncverse/hub/internal/rig"
)

// clockedWatch is a watch looked at on a clock of whole seconds the test moves (a look a second, a gap of a minute),
// with the churn the test sets and the seconds at which the watch trimmed.
type clockedWatch struct {
	w     *watch
	start time.Time
	churn int64
	trims []int
}

func newClockedWatch(burst int64, quiet time.Duration) *clockedWatch {
	cfg := Config{Burst: burst, Quiet: quiet, Every: time.Second, Gap: time.Minute, Churn: func() int64 { return 0 }}
	start := time.Unix(1_000_000, 0)
	return &clockedWatch{w: newWatch(cfg, start), start: start}
}

// look is the watch's look at the given second: a trim when it is due.
func (c *clockedWatch) look(second int) {
	now := c.start.Add(time.Duration(second) * time.Second)
	if c.w.due(c.churn, now) {
		c.trims = append(c.trims, second)
		c.w.trimmed(now)
	}
}

// The rule, looked at once a second over a 5 s quiet window: a burst is trimmed once, after it; churn that never
// stops, or stays below the burst, is not.
func TestWatchTrimsOnceAfterEachBurst(t *testing.T) {
	s := newClockedWatch(1000, 5*time.Second)
	second := 0
	for ; second < 10; second++ { // a burst of 5,000 opens over 10 s
		s.churn += 500
		s.look(second)
	}
	for ; second < 30; second++ { // quiet, but for a trickle below a tenth of the burst per window
		s.churn += 10
		s.look(second)
	}
	if len(s.trims) != 1 || s.trims[0] != 14 {
		t.Fatalf("trims at seconds %v, want one, at second 14 (5 s after the burst)", s.trims)
	}
	for ; second < 300; second++ { // steady churn of 200/s: memory is reused, never trimmed
		s.churn += 200
		s.look(second)
	}
	if len(s.trims) != 1 {
		t.Fatalf("trims at seconds %v during steady churn, want none after the first", s.trims)
	}
	for ; second < 320; second++ { // the churn stops: what it left behind is handed back
		s.look(second)
	}
	if len(s.trims) != 2 {
		t.Fatalf("trims at seconds %v, want a second one once the steady churn stopped", s.trims)
	}
	for ; second < 400; second++ { // small bursts below Burst are left alone
		if second%20 == 0 {
			s.churn += 600
		}
		s.look(second)
	}
	if len(s.trims) != 2 {
		t.Fatalf("trims at seconds %v after bursts below the threshold, want none more", s.trims)
	}
}

// Gap holds back a second trim after a first one.
func TestWatchKeepsTheGapBetweenTrims(t *testing.T) {
	s := newClockedWatch(100, 2*time.Second)
	for second := 0; second < 120; second++ {
		if second%10 == 0 { // a burst every 10 s
			s.churn += 1000
		}
		s.look(second)
	}
	if len(s.trims) != 2 || s.trims[1]-s.trims[0] < 60 {
		t.Fatalf("trims at seconds %v, want two at least a minute apart", s.trims)
	}
}

// Run with the real FreeOSMemory: garbage left by a burst goes back to the OS, and the trim is counted.
func TestRunHandsGarbageBack(t *testing.T) {
	var churn atomic.Int64
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = Run(ctx, Config{Churn: churn.Load, Burst: 100, Quiet: 30 * time.Millisecond, Every: 10 * time.Millisecond,
			Gap: time.Millisecond, Log: zerolog.Nop(), Metrics: m})
	})
	defer func() { cancel(); wg.Wait() }()

	garbage := make([][]byte, 0, 64)
	for range 64 {
		garbage = append(garbage, make([]byte, 1<<20))
	}
	runtime.KeepAlive(garbage)
	garbage = nil
	before := heapReleased()
	churn.Add(1000) // the burst
	rig.Eventually(t, 10*time.Second, "a trim after a burst that ended", func() bool { return testutil.ToFloat64(m.trims) >= 1 })
	if got := heapReleased() - before; got < 32<<20 {
		t.Errorf("heap released rose by %d MiB after the trim, want at least 32 of the 64 MiB of garbage", got>>20)
	}
	if got := testutil.ToFloat64(m.released); got < 32<<20 {
		t.Errorf("hub_memory_trim_released_bytes_total = %.0f, want at least 32 MiB", got)
	}
}

// A burst of 0 turns trimming off: Run returns at once.
func TestRunOff(t *testing.T) {
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), Config{Churn: func() int64 { return 1 << 40 }}) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run with Burst 0 did not return")
	}
}
