package sse

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/syncverse/hub/hub"
)

// An HTTP/1.1 stream over plain TCP is taken over from net/http (hijacked) before its response starts. Its handler
// replays what the client missed, then returns: a live stream has no goroutine of its own while it waits. Events
// wake it through the subscription (Notify) and heartbeats through the handler's wheel (beat); a wake queues it for
// the handler's workers, a few goroutines that write for every detached stream without ever blocking (rawOutput).
// A stream whose socket does not take a write at once moves to a goroutine of its own until it has caught up, so a
// slow client never holds a worker. What stays per idle stream is its connection, its subscription and one
// goroutine parked in a 1-byte read (2 KiB of stack) that notices the client leaving, instead of net/http's
// goroutine, buffers and request state (about 28 KiB).
//
// HTTP/2 and TLS streams stay with net/http (conn.serve): their framing is net/http's.

// Run states of a detached stream. Only the goroutine that moved it to running changes it from running, except
// wake's running → dirty.
const (
	stHandler  int32 = iota // the handler's goroutine owns the stream (replay); wakes are left to it
	stIdle                  // nothing runs; a wake queues a run
	stRunning               // a run is queued or writing; a wake marks it dirty
	stDirty                 // a run is writing and something new is pending: it looks again before it ends
	stFinished              // the stream has ended
)

// detached is an HTTP/1.1 stream served on its raw connection.
type detached struct {
	h       *Handler
	c       *conn
	out     *rawOutput
	nc      net.Conn
	info    *streamInfo
	release func() // the connection slot of the limits middleware (see Keep), or nil
	state   atomic.Int32
	due     atomic.Bool // a heartbeat may be due (set by the wheel)
	expired atomic.Bool // the client's credentials ran out (set by expiry)
	expiry  *time.Timer
	slot    int     // index in the handler's registry, under its lock
	lv      *leaver // watches the connection for the client leaving; nil: a reader goroutine does (read)
	fd      int32
	rbuf    [1]byte
}

// hijack takes the connection of an HTTP/1.1 request over plain TCP from net/http, before anything is written. It
// returns nil when the stream must stay with net/http.
func hijack(w http.ResponseWriter, r *http.Request) net.Conn {
	if r.ProtoMajor != 1 || r.TLS != nil {
		return nil
	}
	nc, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil // the ResponseWriter cannot (a test recorder): net/http keeps the stream
	}
	return nc
}

// serveDetached runs a stream on its hijacked connection: head, replay, then hand-over to wakes. ctx is the
// request's; net/http does not cancel it for a hijacked connection, so the leaver (or the reader) ends the
// subscription instead when the client leaves.
func (h *Handler) serveDetached(ctx context.Context, w http.ResponseWriter, nc net.Conn, sub *hub.Subscription,
	req *request, until time.Time, info *streamInfo, release func()) {
	d := &detached{h: h, nc: nc, info: info, release: release, out: newRawOutput(nc, sub.Done())}
	d.c = newConn(h, d.out, sub)
	if !h.track(d) {
		h.wg.Add(1)
		go d.read()
	}
	sub.OnWake(func() {
		select {
		case <-sub.Done():
			d.c.cut()
		default:
		}
		d.wake()
	})

	setStreamHeaders(w.Header())
	head := append(rawHeader(w.Header(), time.Now()), chunk(retryFrame(h.cfg.Retry))...)
	if err := d.c.write(head); err != nil {
		d.finish(CloseWriteError)
		return
	}
	if err := sub.Start(ctx, req.from, d.c); err != nil {
		d.finish(d.c.reason(ctx, err))
		return
	}
	if !until.IsZero() {
		d.expiry = time.AfterFunc(time.Until(until), func() { d.expired.Store(true); d.wake() })
	}
	d.out.share()
	d.state.Store(stIdle)
	d.wake() // whatever came during the hand-over, including an end
}

// read waits for the client to leave, where the handler's leaver cannot: a read returns only at EOF or an error (a
// client sends nothing after its request). It ends the subscription, which wakes the stream to finish.
func (d *detached) read() {
	defer d.h.wg.Done()
	for {
		if _, err := d.nc.Read(d.rbuf[:]); err != nil {
			break
		}
	}
	d.c.sub.Close()
}

// wake makes sure a run will look at the stream: it queues one, or marks the running one dirty. It never blocks;
// Broadcast calls it for every event it queues here.
func (d *detached) wake() {
	for {
		switch st := d.state.Load(); st {
		case stIdle:
			if d.state.CompareAndSwap(st, stRunning) {
				select {
				case d.h.work <- d:
					d.h.helpWhenBacklogged()
				default: // more streams are waiting than the queue holds: this one runs on its own
					d.h.wg.Add(1) // the stream's own count is held until finish, so this never races Wait at zero
					go d.runOwn(false)
				}
				return
			}
		case stRunning:
			if d.state.CompareAndSwap(st, stDirty) {
				return
			}
		default: // dirty: the run looks again; handler: serveDetached wakes it at the hand-over; finished
			return
		}
	}
}

// step results
const (
	stepIdle = iota // nothing left to do
	stepMore        // a batch was written: give the other streams a turn, then look again
	stepEnd         // the stream has ended
	stepMove        // a write is pending, or a catch-up must read the store: continue on a goroutine of its own
)

// run does one step of the stream on a worker. A stream with more to do goes to the back of the queue rather than
// keeping the worker: under load every woken stream gets a turn, and the queued events of each make one batch.
func (d *detached) run() {
	for {
		res, reason := d.step(false)
		switch res {
		case stepEnd:
			d.finish(reason)
			return
		case stepMove:
			d.out.shared = false
			d.h.wg.Add(1)
			go d.runOwn(true)
			return
		case stepIdle:
			if d.state.CompareAndSwap(stRunning, stIdle) {
				return
			}
		}
		d.state.Store(stRunning) // dirty, or more to do: still running, queued again
		select {
		case d.h.work <- d:
			return
		default: // the queue is full: carry on here
		}
	}
}

// runOwn runs the stream on a goroutine of its own, where writes may block and the store may be read: after a
// write the socket did not take at once (flush the rest first), or when the work queue was full.
func (d *detached) runOwn(flush bool) {
	defer d.h.wg.Done()
	d.out.shared = false
	if flush {
		if err := d.out.flushPending(); err != nil {
			d.finish(d.c.reason(d.h.ctx, err))
			return
		}
	}
	for {
		if res, reason := d.step(true); res == stepEnd {
			d.finish(reason)
			return
		}
		d.out.share() // before the stream can be queued again
		if d.state.CompareAndSwap(stRunning, stIdle) {
			return
		}
		d.out.shared = false
		d.state.Store(stRunning) // it was dirty
	}
}

// step does a round of the stream's work: the end first, then a catch-up, the queued events, a heartbeat. On a
// worker (own false) it writes one batch at most, stops at a write the socket did not take whole, and leaves a
// catch-up to the stream's own goroutine.
func (d *detached) step(own bool) (res int, reason CloseReason) {
	c := d.c
	ctx := d.h.ctx
	select {
	case <-c.sub.Done():
		return stepEnd, c.reason(ctx, nil)
	default:
	}
	if d.expired.Load() {
		_ = c.writeFinal(authExpired)
		return stepEnd, CloseTokenExpired
	}
	for {
		if c.sub.Lagged() { // a repair burst overflowed the queue: read the rest from the store
			if !own {
				return stepMove, ""
			}
			if err := c.sub.CatchUp(ctx, c); err != nil {
				return stepEnd, c.reason(ctx, err)
			}
		}
		took, err := c.live()
		if err != nil {
			return stepEnd, c.reason(ctx, err)
		}
		if !took {
			break
		}
		switch {
		case d.out.blocked():
			return stepMove, ""
		case !own:
			return stepMore, ""
		}
	}
	if d.due.Swap(false) {
		if err := c.heartbeat(beatEvery(d.h.cfg.Heartbeat)); err != nil {
			return stepEnd, c.reason(ctx, err)
		}
		if d.out.blocked() {
			return stepMove, ""
		}
	}
	return stepIdle, ""
}

// finish ends the stream once: its subscription, timer, connection, registry entry and connection slot.
func (d *detached) finish(reason CloseReason) {
	d.state.Store(stFinished)
	d.c.sub.Close()
	if d.expiry != nil {
		d.expiry.Stop()
	}
	d.h.untrack(d) // before the close: the leaver lets go of the connection while its number is still its own
	_ = d.nc.Close()
	d.h.closed(d.info, reason, d.c.delivered)
	if d.release != nil {
		d.release()
	}
	d.h.wg.Done()
}
