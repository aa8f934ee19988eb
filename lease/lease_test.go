package lease_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/syncverse/hub/lease"
)

func TestAcquireFenceRelease(t *testing.T) {
	c, o := setup(t)
	rec := &recorder{}
	o.Announcer, o.Topic = rec, "locks.test"
	l := newLocker(t, c, o)
	ctx := context.Background()

	var last int64
	for i := range 3 {
		ls, err := l.TryAcquire(ctx, "project-1", lease.WithWorkflow("wf-1"))
		if err != nil {
			t.Fatalf("TryAcquire #%d: %v", i, err)
		}
		if ls.Fence() <= last {
			t.Fatalf("TryAcquire #%d fence = %d, want > %d", i, ls.Fence(), last)
		}
		last = ls.Fence()
		if _, err := l.TryAcquire(ctx, "project-1"); !errors.Is(err, lease.ErrHeld) {
			t.Fatalf("TryAcquire while held = %v, want ErrHeld", err)
		}
		if err := ls.Release(ctx); err != nil {
			t.Fatalf("Release = %v, want nil", err)
		}
		if err := ls.Release(ctx); err != nil {
			t.Fatalf("second Release = %v, want nil (idempotent)", err)
		}
		if cause := context.Cause(ls.Context()); !errors.Is(cause, lease.ErrReleased) {
			t.Fatalf("Context cause after Release = %v, want ErrReleased", cause)
		}
		if closed(ls.Lost()) {
			t.Fatalf("Lost closed after a Release")
		}
	}
	_ = l.Close()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.events) != 6 {
		t.Fatalf("events = %+v, want 3 acquired + 3 released", rec.events)
	}
	ev := rec.events[0]
	if ev.State != lease.StateAcquired || ev.Key != "project-1" || ev.Holder != t.Name() || ev.Fence != 1 ||
		ev.TTLms != 300 || ev.Workflow != "wf-1" || rec.topics[0] != "locks.test" {
		t.Fatalf("first event = %+v on %q, want acquired project-1 fence 1 ttl 300 wf-1 on locks.test", ev, rec.topics[0])
	}
}

func TestAcquireWaitsForRelease(t *testing.T) {
	c, o := setup(t)
	o.TTL = 5 * time.Second
	l := newLocker(t, c, o)
	ctx := context.Background()
	first, err := l.Acquire(ctx, "k")
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	type acquired struct {
		ls  *lease.Lease
		err error
	}
	got := make(chan acquired, 1)
	go func() {
		ls, err := l.Acquire(ctx, "k")
		got <- acquired{ls, err}
	}()
	time.Sleep(100 * time.Millisecond) // the holder's work
	select {
	case <-got:
		t.Fatalf("second Acquire returned while the first lease was held")
	default:
	}
	released := time.Now()
	if err := first.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	res := <-got
	if res.err != nil {
		t.Fatalf("second Acquire after the release = %v, want a lease", res.err)
	}
	second := res.ls
	if waited := time.Since(released); waited > time.Second {
		t.Fatalf("second Acquire took %v after the release, want well under RetryMax", waited)
	}
	if second.Fence() != first.Fence()+1 {
		t.Fatalf("second fence = %d, want %d", second.Fence(), first.Fence()+1)
	}
	_ = second.Release(ctx)
}

func TestAcquireStopsWithContext(t *testing.T) {
	c, o := setup(t)
	l := newLocker(t, c, o)
	held, err := l.TryAcquire(context.Background(), "k")
	if err != nil {
		t.Fatalf("TryAcquire: %v", err)
	}
	defer held.Release(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := l.Acquire(ctx, "k"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire on a held key with a 100ms context = %v, want DeadlineExceeded", err)
	}
}

func TestWatchdogKeepsLeaseAlive(t *testing.T) {
	c, o := setup(t)
	rec := &recorder{}
	o.Announcer = rec
	l := newLocker(t, c, o)
	other := newLocker(t, c, o)
	ctx := context.Background()
	ls, err := l.Acquire(ctx, "k")
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	time.Sleep(1 * time.Second) // work for more than three TTLs
	if _, err := other.TryAcquire(ctx, "k"); !errors.Is(err, lease.ErrHeld) {
		t.Fatalf("TryAcquire after 1s under a 300ms TTL with the watchdog = %v, want ErrHeld", err)
	}
	if err := ls.Err(); err != nil {
		t.Fatalf("Err() = %v while the watchdog runs, want nil", err)
	}
	if err := ls.Release(ctx); err != nil {
		t.Fatalf("Release = %v", err)
	}
	_ = l.Close()
	if !rec.has(lease.StateRenewed) {
		t.Fatalf("events = %v, want renewals", rec.states())
	}
}

func TestNoWatchdogExpires(t *testing.T) {
	c, o := setup(t)
	o.NoWatchdog = true
	rec := &recorder{}
	o.Announcer = rec
	l := newLocker(t, c, o)
	ctx := context.Background()
	ls, err := l.Acquire(ctx, "k")
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	// The incident: the work outlives the lock and nobody tells it.
	next, err := l.Acquire(ctx, "k")
	if err != nil {
		t.Fatalf("Acquire after the TTL: %v", err)
	}
	if ls.Context().Err() != nil {
		t.Fatalf("a lease without watchdog had its Context cancelled; nothing should track it")
	}
	if err := ls.Release(ctx); !errors.Is(err, lease.ErrExpired) {
		t.Fatalf("Release of the expired lease = %v, want ErrExpired", err)
	}
	if err := next.Release(ctx); err != nil {
		t.Fatalf("Release of the current lease = %v, want nil (the old holder must not have deleted it)", err)
	}
	_ = l.Close()
	if !rec.has(lease.StateExpired) {
		t.Fatalf("events = %v, want an expired event", rec.states())
	}
}
