package lease_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/lease"
)

func TestWatchdogStopsOnRelease(t *testing.T) {
	c, o := setup(t)
	// A TTL of a second (renewals every 333 ms): with 300 ms, a loaded machine can stall the watchdog past the TTL
	// and the lease is lost before its second renewal.
	o.TTL = time.Second
	_ = c.Ping(context.Background()).Err() // open the pool's connection before taking the goroutine baseline
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	reg := prometheus.NewRegistry()
	o.Metrics = lease.NewMetrics(reg, "hub")
	l := lease.New(c, o)
	defer l.Close()
	ls, err := l.Acquire(context.Background(), "k")
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	rig.Eventually(t, 10*time.Second, "two renewals", func() bool {
		v, _ := rig.MetricValue(rig.Gather(t, reg), "hub_lease_renew_total", "outcome=renewed")
		return v >= 2
	})
	if err := ls.Release(context.Background()); err != nil {
		t.Fatalf("Release: %v", err)
	}
}

func TestWatchdogStopsAndReleasesOnContextCancel(t *testing.T) {
	c, o := setup(t)
	// A TTL far above the budget below, so that a key freed only by its expiry cannot pass for one freed at once,
	// however slow a loaded machine is.
	o.TTL = 5 * time.Second
	_ = c.Ping(context.Background()).Err()
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := lease.New(c, o)
	defer l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	ls, err := l.Acquire(ctx, "k")
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	cancel()
	<-ls.Context().Done()
	if !errors.Is(context.Cause(ls.Context()), context.Canceled) {
		t.Fatalf("Context cause = %v, want context.Canceled", context.Cause(ls.Context()))
	}
	// The key is freed at once, not after the TTL.
	rig.Eventually(t, time.Second, "key free after cancel", func() bool {
		other, err := l.TryAcquire(context.Background(), "k")
		if err != nil {
			return false
		}
		_ = other.Release(context.Background())
		return true
	})
	if err := ls.Release(context.Background()); err != nil {
		t.Fatalf("Release after the context ended = %v, want nil (the watchdog released it)", err)
	}
}

func TestWatchdogNoticesTakenKey(t *testing.T) {
	c, o := setup(t)
	rec := &recorder{}
	// The watchdog notices at its next renewal, a third of the TTL; a TTL of 3 s leaves two seconds for a loaded
	// machine, and a watchdog that never notices still fails.
	reg := prometheus.NewRegistry()
	o.TTL, o.Announcer, o.Metrics = 3*time.Second, rec, lease.NewMetrics(reg, "hub")
	l := newLocker(t, c, o)
	ctx := context.Background()
	ls, err := l.Acquire(ctx, "k")
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	// Another holder has the key, as after an expiry this process did not see.
	if err := c.Set(ctx, o.Prefix+"{k}", "someone-else", time.Minute).Err(); err != nil {
		t.Fatalf("SET: %v", err)
	}
	select {
	case <-ls.Lost():
	case <-time.After(o.TTL):
		t.Fatalf("Lost not closed within one TTL after the key was taken")
	}
	if !errors.Is(context.Cause(ls.Context()), lease.ErrLost) {
		t.Fatalf("Context cause = %v, want ErrLost", context.Cause(ls.Context()))
	}
	if err := ls.Release(ctx); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("Release = %v, want ErrLost", err)
	}
	fams := rig.Gather(t, reg)
	if taken, _ := rig.MetricValue(fams, "hub_lease_lost_total", "reason=taken"); taken != 1 {
		t.Errorf("hub_lease_lost_total{reason=taken} = %v, want 1", taken)
	}
	if expired, ok := rig.MetricValue(fams, "hub_lease_lost_total", "reason=expired"); !ok || expired != 0 {
		t.Errorf("hub_lease_lost_total{reason=expired} = %v (present %v), want 0 from the start", expired, ok)
	}
	if v, _ := c.Get(ctx, o.Prefix+"{k}").Result(); v != "someone-else" {
		t.Fatalf("key after the lost lease's Release = %q, want the other holder's token kept", v)
	}
	_ = l.Close()
	if !rec.has(lease.StateLost) {
		t.Fatalf("events = %v, want a lost event", rec.states())
	}
}

func TestRedisOutageLongerThanTTLMarksLeaseLost(t *testing.T) {
	srv := rig.StartRedisWith(t, rig.RedisOptions{})
	c := srv.Client()
	rec := &recorder{}
	o := lease.Options{TTL: 300 * time.Millisecond, Prefix: rig.Prefix(t) + ":lease:", Announcer: rec}
	l := newLocker(t, c, o)
	ctx := context.Background()
	ls, err := l.Acquire(ctx, "k")
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	srv.Kill()
	killed := time.Now()
	select {
	case <-ls.Lost():
	case <-time.After(o.TTL + 2*time.Second):
		t.Fatalf("Lost not closed %v into an outage with a %v TTL", o.TTL+2*time.Second, o.TTL)
	}
	// Within the TTL of the last renewal, which came before the kill; the 250 ms on top are for a timer that a
	// loaded machine runs late, and still fail a watchdog that waits for a second TTL.
	if after := time.Since(killed); after > o.TTL+250*time.Millisecond {
		t.Fatalf("lease declared lost %v after the outage began, want within the TTL (%v)", after, o.TTL)
	}
	if !errors.Is(context.Cause(ls.Context()), lease.ErrExpired) {
		t.Fatalf("Context cause = %v, want ErrExpired", context.Cause(ls.Context()))
	}
	time.Sleep(o.TTL) // keep the outage going past the TTL, as an operator's restart would
	if err := srv.Start(); err != nil {
		t.Fatalf("restart redis: %v", err)
	}
	if err := ls.Release(ctx); !errors.Is(err, lease.ErrExpired) {
		t.Fatalf("Release after the outage = %v, want ErrExpired", err)
	}
	var next *lease.Lease
	rig.Eventually(t, 2*time.Second, "a new lease after the restart", func() bool {
		next, err = l.TryAcquire(ctx, "k")
		return err == nil
	})
	_ = next.Release(ctx)
	_ = l.Close()
	if !rec.has(lease.StateExpired) {
		t.Fatalf("events = %v, want an expired event", rec.states())
	}
}

// slowAnnouncer never answers before its context ends.
type slowAnnouncer struct{}

func (slowAnnouncer) Publish(ctx context.Context, _, _ string, _ []byte) (string, error) {
	<-ctx.Done()
	return "", ctx.Err()
}

func TestSlowAnnouncerNeverDelaysTheLease(t *testing.T) {
	c, o := setup(t)
	// An AnnounceTimeout of 300 ms: waiting on the announcer would cost 3 s over the ten announcements below and
	// about 900 ms at Close (two queued, one in flight), far from the budgets, which leave room for a loaded machine.
	o.Announcer, o.AnnounceTimeout, o.AnnounceQueue = slowAnnouncer{}, 300*time.Millisecond, 2
	m := lease.NewMetrics(nil, "")
	o.Metrics = m
	l := lease.New(c, o)
	ctx := context.Background()
	start := time.Now()
	for range 5 {
		ls, err := l.TryAcquire(ctx, "k")
		if err != nil {
			t.Fatalf("TryAcquire: %v", err)
		}
		if err := ls.Release(ctx); err != nil {
			t.Fatalf("Release: %v", err)
		}
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("5 acquire+release with a stuck announcer took %v, want no wait on it", took)
	}
	closeStart := time.Now()
	_ = l.Close()
	if took := time.Since(closeStart); took > 700*time.Millisecond {
		t.Fatalf("Close with a stuck announcer took %v, want about one AnnounceTimeout", took)
	}
	if _, err := l.TryAcquire(ctx, "k"); !errors.Is(err, lease.ErrClosed) {
		t.Fatalf("TryAcquire after Close = %v, want ErrClosed", err)
	}
}

var _ redis.UniversalClient = (*redis.Client)(nil)
