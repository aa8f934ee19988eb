package lease

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Lease is one holding of a key. Its methods are safe for concurrent use.
type Lease struct {
	locker   *Locker
	key      string
	token    string
	fence    int64
	workflow string

	parent context.Context
	ctx    context.Context
	cancel context.CancelCauseFunc
	lost   chan struct{}

	stop      chan struct{} // closed by Release to stop the watchdog
	stopOnce  sync.Once
	watchDone chan struct{} // closed when the watchdog has returned (at once without a watchdog)

	mu       sync.Mutex
	deadline time.Time // when the key expires at the latest, as seen from here
	cause    error     // nil while held

	releaseOnce sync.Once
	releaseErr  error
}

func newLease(l *Locker, ctx context.Context, key, token string, fence int64, workflow string, sent time.Time) *Lease {
	lctx, cancel := context.WithCancelCause(ctx)
	ls := &Lease{
		locker: l, key: key, token: token, fence: fence, workflow: workflow,
		parent: ctx, ctx: lctx, cancel: cancel, lost: make(chan struct{}),
		stop: make(chan struct{}), watchDone: make(chan struct{}),
		// The TTL started when Redis ran SET, which was after sent: counting from sent errs on the safe side.
		deadline: sent.Add(l.opts.TTL),
	}
	l.opts.Metrics.held.Inc()
	ls.announce(StateAcquired)
	if l.opts.NoWatchdog {
		close(ls.watchDone)
	} else {
		go ls.watch()
	}
	return ls
}

// Key is the key the lease holds, without the Locker's prefix.
func (ls *Lease) Key() string { return ls.key }

// Fence is the lease's fencing token: it grows with every acquisition of the key, so a resource that remembers the
// highest token it has seen can refuse a holder that lost its lease without knowing it. See Guard.
func (ls *Lease) Fence() int64 { return ls.fence }

// Holder is the Locker's holder name.
func (ls *Lease) Holder() string { return ls.locker.opts.Holder }

// Context is cancelled when the lease ends: released, lost, expired, or the Acquire context ended. context.Cause
// tells which (ErrReleased, ErrLost, ErrExpired, or the parent's cause). Work done under the lease should stop when
// it is cancelled, and guard its side effects with the fence anyway, because the news can come late.
func (ls *Lease) Context() context.Context { return ls.ctx }

// Lost is closed when the lease is lost or expires (not when it is released).
func (ls *Lease) Lost() <-chan struct{} { return ls.lost }

// Err returns nil while the lease is held, then why it ended.
func (ls *Lease) Err() error {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.cause
}

// Release stops the watchdog, then deletes the key if it still holds this lease's token. It is idempotent: every call
// returns the first call's result, which is nil when the lease was held until now, ErrLost or ErrExpired when it had
// already ended (so the work may have overlapped another holder's), or a Redis error (the key then expires by itself
// within the TTL).
//
// Release does not give up when ctx is already cancelled, since a lease is most often released because its work's
// context ended; the call is bounded by min(TTL, 5s) instead.
func (ls *Lease) Release(ctx context.Context) error {
	start := time.Now()
	ls.stopWatchdog()
	did := false
	ls.releaseOnce.Do(func() {
		did = true
		ls.releaseErr = ls.releaseKey(ctx)
	})
	if did {
		ls.locker.opts.Metrics.latency.Observe(time.Since(start).Seconds())
	}
	return ls.releaseErr
}

func (ls *Lease) stopWatchdog() {
	ls.stopOnce.Do(func() { close(ls.stop) })
	<-ls.watchDone
}

// releaseKey runs the compare-and-delete. The watchdog calls it too, when the Acquire context ends.
func (ls *Lease) releaseKey(ctx context.Context) error {
	m := ls.locker.opts.Metrics
	if cause := ls.Err(); cause != nil {
		return fmt.Errorf("release %q: %w", ls.key, cause)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(ls.locker.opts.TTL, 5*time.Second))
	defer cancel()
	lk, _ := ls.locker.keys(ls.key)
	n, err := releaseScript.Run(ctx, ls.locker.client, []string{lk}, ls.token).Int64()
	switch {
	case err != nil:
		m.release.WithLabelValues(outcomeError).Inc()
		ls.end(ErrReleased, "")
		return fmt.Errorf("release %q: %w", ls.key, err)
	case n == 0:
		m.release.WithLabelValues(outcomeExpired).Inc()
		ls.end(ErrExpired, StateExpired)
		return fmt.Errorf("release %q: %w", ls.key, ErrExpired)
	default:
		m.release.WithLabelValues(outcomeReleased).Inc()
		ls.end(ErrReleased, StateReleased)
		return nil
	}
}

// end records why the lease ended, cancels its Context and announces state (none when state is empty). Only the
// first call has any effect; it reports whether it was the first.
func (ls *Lease) end(cause error, state string) bool {
	ls.mu.Lock()
	if ls.cause != nil {
		ls.mu.Unlock()
		return false
	}
	ls.cause = cause
	ls.mu.Unlock()

	// Cancel before closing lost, so whoever wakes on Lost already sees the cause on Context.
	ls.cancel(cause)
	m := ls.locker.opts.Metrics
	m.held.Dec()
	if errors.Is(cause, ErrLost) || errors.Is(cause, ErrExpired) {
		close(ls.lost)
		reason := reasonTaken
		if errors.Is(cause, ErrExpired) {
			reason = outcomeExpired
		}
		m.lost.WithLabelValues(reason).Inc()
		ls.locker.log.Warn().Str("key", ls.key).Int64("fence", ls.fence).Str("state", state).
			Msg("lease ended before its release")
	}
	if state != "" {
		ls.announce(state)
	}
	return true
}

func (ls *Lease) announce(state string) {
	ls.locker.ann.announce(Event{
		Key: ls.key, Holder: ls.locker.opts.Holder, Fence: ls.fence, State: state,
		TTLms: ls.locker.opts.TTL.Milliseconds(), Workflow: ls.workflow,
	})
}
