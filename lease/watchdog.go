package lease

import (
	"context"
	"fmt"
	"time"
)

type renewal struct {
	sent time.Time
	ok   bool
	err  error
}

// watchdog is the state of one lease's watch loop; only the watch goroutine touches it.
type watchdog struct {
	ls       *Lease
	tick     *time.Timer
	expire   *time.Timer
	retry    time.Duration
	inFlight bool
	failing  bool
}

// watch renews the lease every RenewEvery until Release, loss, expiry or the end of the Acquire context.
//
// The renewal runs in a goroutine of its own (owned here: watch waits for it before returning) while watch keeps an
// expiry timer, because a client stuck on an unreachable Redis may take longer than the TTL to fail. The lease must
// be declared expired when its TTL runs out as measured here, not when the client gives up.
func (ls *Lease) watch() {
	defer close(ls.watchDone)
	o := ls.locker.opts
	renewCtx, cancelRenew := context.WithCancel(context.WithoutCancel(ls.parent))
	results := make(chan renewal, 1)
	w := &watchdog{
		ls: ls, tick: time.NewTimer(o.RenewEvery), expire: time.NewTimer(time.Until(ls.deadlineNow())),
		retry: max(o.RetryMin, o.RenewEvery/5),
	}
	defer func() {
		w.tick.Stop()
		w.expire.Stop()
		cancelRenew()
		if w.inFlight {
			<-results
		}
	}()
	for {
		select {
		case <-ls.stop:
			return
		case <-ls.parent.Done():
			// The owner gave up on the work: free the key now rather than make the next holder wait out the TTL.
			ls.releaseOnce.Do(func() { ls.releaseErr = ls.releaseKey(ls.parent) })
			return
		case <-w.expire.C:
			ls.end(ErrExpired, StateExpired)
			return
		case <-w.tick.C:
			w.inFlight = true
			go ls.renew(renewCtx, results)
		case r := <-results:
			w.inFlight = false
			if !w.handle(r) {
				return
			}
		}
	}
}

// handle acts on one renewal's result and reports whether the lease is still held.
func (w *watchdog) handle(r renewal) bool {
	ls := w.ls
	o := ls.locker.opts
	switch {
	case r.err != nil:
		o.Metrics.renew.WithLabelValues(outcomeError).Inc()
		if !w.failing { // once per streak: an outage must not flood the log
			ls.locker.log.Warn().Err(r.err).Str("key", ls.key).Msg("lease renewal failed; retrying until it expires")
		}
		w.failing = true
		w.tick.Reset(w.retry)
		return true
	case !r.ok:
		o.Metrics.renew.WithLabelValues(outcomeLost).Inc()
		ls.end(ErrLost, StateLost)
		return false
	default:
		o.Metrics.renew.WithLabelValues(outcomeRenewed).Inc()
		w.failing = false
		deadline := r.sent.Add(o.TTL)
		ls.setDeadline(deadline)
		w.expire.Reset(time.Until(deadline))
		w.tick.Reset(o.RenewEvery)
		ls.announce(StateRenewed)
		return true
	}
}

// renew runs the compare-and-PEXPIRE once. Its context ends at the lease's deadline: a renewal that arrives later
// would find the key expired anyway.
func (ls *Lease) renew(ctx context.Context, out chan<- renewal) {
	ctx, cancel := context.WithDeadline(ctx, ls.deadlineNow())
	defer cancel()
	lk, _ := ls.locker.keys(ls.key)
	sent := time.Now()
	cmd, acked, err := ls.locker.replicated(ctx, renewScript, []string{lk}, ls.token, ls.locker.opts.TTL.Milliseconds())
	var n int64
	if err == nil {
		n, err = cmd.Int64()
	}
	if err == nil && n == 1 && !ls.locker.enough(acked) {
		// Not a renewal as far as a promoted replica knows: the deadline must not move.
		err = fmt.Errorf("renew %q: %d of %d replicas: %w", ls.key, acked, ls.locker.opts.MinReplicas, ErrUnreplicated)
	}
	out <- renewal{sent: sent, ok: n == 1, err: err}
}

func (ls *Lease) deadlineNow() time.Time {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.deadline
}

func (ls *Lease) setDeadline(t time.Time) {
	ls.mu.Lock()
	ls.deadline = t
	ls.mu.Unlock()
}
