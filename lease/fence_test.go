package lease_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/lease"
)

// setCell writes ARGV[2] into the string at KEYS[2], as the guarded side effect.
var setCell = lease.NewFencedScript(`redis.call('SET', KEYS[2], ARGV[2]) return 1`)

func TestGuardRejectsLowerFence(t *testing.T) {
	c, o := setup(t)
	l := newLocker(t, c, o)
	ctx := context.Background()
	g := l.Guard(o.Prefix + "{cell}:fence")
	cell := o.Prefix + "{cell}"
	for _, step := range []struct {
		fence   int64
		value   string
		wantErr error
	}{
		{1, "one", nil},
		{3, "three", nil},
		{3, "three again", nil}, // one holder may write several times
		{2, "two", lease.ErrStaleFence},
		{1, "one", lease.ErrStaleFence},
		{4, "four", nil},
	} {
		_, err := g.Run(ctx, step.fence, setCell, []string{cell}, step.value)
		if !errors.Is(err, step.wantErr) {
			t.Fatalf("Run(fence %d) = %v, want %v", step.fence, err, step.wantErr)
		}
	}
	if v, _ := c.Get(ctx, cell).Result(); v != "four" {
		t.Fatalf("cell = %q, want %q (no stale write may land)", v, "four")
	}
	if err := g.Admit(ctx, 3); !errors.Is(err, lease.ErrStaleFence) {
		t.Fatalf("Admit(3) after 4 = %v, want ErrStaleFence", err)
	}
	if err := g.Admit(ctx, 5); err != nil {
		t.Fatalf("Admit(5) = %v, want nil", err)
	}
}

func TestGuardPassesScriptErrors(t *testing.T) {
	c, o := setup(t)
	l := newLocker(t, c, o)
	failing := lease.NewFencedScript(`return redis.error_reply('TABLEEXISTS t1')`)
	_, err := l.Guard(o.Prefix+"{x}:fence").Run(context.Background(), 1, failing, []string{o.Prefix + "{x}"})
	if err == nil || errors.Is(err, lease.ErrStaleFence) || !strings.Contains(err.Error(), "TABLEEXISTS t1") {
		t.Fatalf("Run of a failing script = %v, want its own error", err)
	}
}

func TestMetricsCountTransitions(t *testing.T) {
	c, o := setup(t)
	reg := prometheus.NewRegistry()
	m := lease.NewMetrics(reg, "agent7")
	o.Metrics = m
	l := newLocker(t, c, o)
	ctx := context.Background()
	ls, err := l.TryAcquire(ctx, "k")
	if err != nil {
		t.Fatalf("TryAcquire: %v", err)
	}
	_, _ = l.TryAcquire(ctx, "k")
	_ = ls.Release(ctx)
	_ = l.Guard(o.Prefix+"{k}:g").Admit(ctx, 2)
	_ = l.Guard(o.Prefix+"{k}:g").Admit(ctx, 1)

	for _, want := range []struct {
		metric, outcome string
		n               float64
	}{
		{"agent7_lease_acquire_total", "acquired", 1},
		{"agent7_lease_acquire_total", "held", 1},
		{"agent7_lease_release_total", "released", 1},
		{"agent7_lease_fence_total", "admitted", 1},
		{"agent7_lease_fence_total", "stale", 1},
	} {
		if got, ok := rig.MetricValue(rig.Gather(t, reg), want.metric, "outcome="+want.outcome); !ok || got != want.n {
			t.Errorf("%s{outcome=%q} = %v, want %v", want.metric, want.outcome, got, want.n)
		}
	}
	mfs, _ := reg.Gather()
	var observed uint64
	for _, mf := range mfs {
		if mf.GetName() == "agent7_lease_release_duration_seconds" {
			observed = mf.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	if observed != 1 {
		t.Errorf("agent7_lease_release_duration_seconds count = %d, want 1", observed)
	}
}

// The scripts must also run on the embedded miniredis that development setups use.
func TestScriptsOnMiniredis(t *testing.T) {
	mr := miniredis.NewMiniRedis()
	mr.ClockTTL(true)
	if err := mr.Start(); err != nil {
		t.Fatalf("start miniredis: %v", err)
	}
	defer mr.Close()
	c := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer c.Close()
	l := lease.New(c, lease.Options{TTL: time.Second}) // roomy: the renewals must get through on a loaded CI machine
	defer l.Close()
	ctx := context.Background()

	ls, err := l.Acquire(ctx, "k")
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if _, err := l.TryAcquire(ctx, "k"); !errors.Is(err, lease.ErrHeld) {
		t.Fatalf("TryAcquire while held = %v, want ErrHeld", err)
	}
	time.Sleep(1500 * time.Millisecond) // past the TTL: only the watchdog keeps it
	if err := ls.Release(ctx); err != nil {
		t.Fatalf("Release after renewals = %v, want nil", err)
	}
	g := l.Guard("{k}:g")
	if err := g.Admit(ctx, 2); err != nil {
		t.Fatalf("Admit(2) = %v", err)
	}
	if err := g.Admit(ctx, 1); !errors.Is(err, lease.ErrStaleFence) {
		t.Fatalf("Admit(1) after 2 = %v, want ErrStaleFence", err)
	}
}
