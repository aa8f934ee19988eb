package sse

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/syncverse/hub/hub"
)

// An HTTP/1.1 stream over plain TCP is taken over from net/http (hijacked) before its response starts, unless the
// raw engine is off (Config.NoDetach). Its handler replays what the client missed, then returns: a live stream has
// no goroutine of its own while it waits. Events wake it through the subscription (OnWake) and heartbeats through
// the handler's wheel (wheel.go); a wake queues it for the handler's workers (workers.go), a few goroutines that
// write for every raw stream without ever blocking (rawOutput). A stream whose socket does not take a write at once
// moves to a goroutine of its own until it has caught up, so a slow client never holds a worker. What stays per idle
// stream is its connection, its subscription and, outside Linux, one goroutine parked in a 1-byte read (2 KiB of
// stack) that notices the client leaving (on Linux the wheel's epoll set does: leave_linux.go), instead of
// net/http's goroutine, buffers and request state (about 28 KiB).

// Run states of a raw stream. Only the goroutine that moved it to running changes it from running, except wake's
// running → dirty.
const (
	stHandler  int32 = iota // the handler's goroutine owns the stream (replay); wakes are left to it
	stIdle                  // nothing runs; a wake queues a run
	stRunning               // a run is queued or writing; a wake marks it dirty
	stDirty                 // a run is writing and something new is pending: it looks again before it ends
	stFinished              // the stream has ended
)

// rawStream is an HTTP/1.1 stream served on its raw connection.
type rawStream struct {
	stream
	raw     *rawOutput
	nc      net.Conn
	info    *streamInfo
	release func() // Config.Admit's, or nil
	state   atomic.Int32
	expiry  *time.Timer
	wslot   int // the heartbeat wheel's slot holding it, and its index there, under the registry's lock
	wpos    int
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

// serveRaw runs a stream on its hijacked connection: head, replay, then hand-over to wakes. ctx is the request's;
// net/http does not cancel it for a hijacked connection, so the leaver (or the reader) ends the subscription instead
// when the client leaves.
func (h *Handler) serveRaw(ctx context.Context, w http.ResponseWriter, nc net.Conn, sub *hub.Subscription,
	req *request, until time.Time, info *streamInfo, release func()) {
	d := &rawStream{nc: nc, info: info, release: release, raw: newRawOutput(nc, sub.Done(), w.Header())}
	d.init(h, d.raw, sub, until)
	d.startID = req.startID
	if !h.track(d) {
		h.wg.Add(1)
		go d.read()
	}
	sub.OnWake(d.woken)
	if err := d.write(d.raw.open(retryFrame(h.cfg.Retry))); err != nil {
		d.finish(CloseWriteError)
		return
	}
	if !until.IsZero() { // armed before the replay; a wake before the hand-over is left to it
		d.expiry = time.AfterFunc(time.Until(until), func() { d.expired.Store(true); d.wake() })
	}
	if err := sub.Start(ctx, req.from, &d.stream); err != nil {
		d.finish(d.reason(ctx, err))
		return
	}
	if d.startID {
		if err := d.writeStart(); err != nil {
			d.finish(CloseWriteError)
			return
		}
	}
	d.raw.share()
	d.state.Store(stIdle)
	d.wake() // whatever came during the hand-over, including an end or the expiry
}

// woken is the subscription's wake: an event, a lag, or its end.
func (d *rawStream) woken() {
	d.cutWhenEnded()
	d.wake()
}

// read waits for the client to leave, where the handler's leaver cannot: a read returns only at EOF or an error (a
// client sends nothing after its request). It ends the subscription, which wakes the stream to finish.
func (d *rawStream) read() {
	defer d.h.wg.Done()
	for {
		if _, err := d.nc.Read(d.rbuf[:]); err != nil {
			break
		}
	}
	d.sub.Close()
}

// wake makes sure a run will look at the stream: it queues one, or marks the running one dirty. It never blocks;
// Broadcast calls it for every event it queues here.
func (d *rawStream) wake() {
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
		default: // dirty: the run looks again; handler: serveRaw wakes it at the hand-over; finished
			return
		}
	}
}

// run does one step of the stream on a worker. A stream with more to do goes to the back of the queue rather than
// keeping the worker: under load every woken stream gets a turn, and the queued events of each make one batch.
func (d *rawStream) run() {
	for {
		res, reason := d.step(d.h.ctx, false)
		switch res {
		case stepEnd:
			d.finish(reason)
			return
		case stepMove:
			d.raw.shared = false
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
func (d *rawStream) runOwn(flush bool) {
	defer d.h.wg.Done()
	d.raw.shared = false
	if flush {
		if err := d.raw.flushPending(); err != nil {
			d.finish(d.reason(d.h.ctx, err))
			return
		}
	}
	for {
		if res, reason := d.step(d.h.ctx, true); res == stepEnd {
			d.finish(reason)
			return
		}
		d.raw.share() // before the stream can be queued again
		if d.state.CompareAndSwap(stRunning, stIdle) {
			return
		}
		d.raw.shared = false
		d.state.Store(stRunning) // it was dirty
	}
}

// finish ends the stream once: its subscription, timer, connection, registry entry and admission.
func (d *rawStream) finish(reason CloseReason) {
	d.state.Store(stFinished)
	d.sub.Close()
	if d.expiry != nil {
		d.expiry.Stop()
	}
	d.h.untrack(d) // before the close: the leaver lets go of the connection while its number is still its own
	_ = d.nc.Close()
	d.h.closed(d.info, reason, d.delivered)
	if d.release != nil {
		d.release()
	}
	d.h.wg.Done()
}
