package sse

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/syncverse/hub/hub"
)

// CloseReason says why a stream ended; it labels hub_sse_connections_closed_total.
type CloseReason string

const (
	CloseClientGone   CloseReason = "client_gone"   // the client went away
	CloseSlow         CloseReason = "slow"          // its queue overflowed; it reconnects and replays
	CloseShutdown     CloseReason = "shutdown"      // the hub is shutting down
	CloseWriteError   CloseReason = "write_error"   // a write failed or missed its deadline
	CloseTokenExpired CloseReason = "token_expired" // its credentials expired
)

// maxBatch bounds how many queued events one write carries.
const maxBatch = 128

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// batchPool holds the slices live batches are gathered in: shared, so an idle stream keeps none of its own.
var batchPool = sync.Pool{New: func() any { b := make([]*hub.Event, 0, maxBatch); return &b }}

// conn is one open stream. It is used by the handler's goroutine only.
type conn struct {
	h         *Handler
	w         http.ResponseWriter
	rc        *http.ResponseController
	sub       *hub.Subscription
	multi     bool
	lastWrite time.Time
	rearm     time.Time // when the write deadline must be pushed back again
	delivered int64
}

func newConn(h *Handler, w http.ResponseWriter, sub *hub.Subscription) *conn {
	c := &conn{h: h, w: w, rc: http.NewResponseController(w), sub: sub, multi: len(sub.Topics()) > 1}
	// An evicted client is usually stuck in a write to a full socket: end that write now rather than at its deadline.
	sub.OnEnd(func() { _ = c.rc.SetWriteDeadline(time.Now()) })
	return c
}

// serve streams until the stream ends and returns why. until is when the client's permission ends (zero: never).
func (c *conn) serve(ctx context.Context, from []hub.From, until time.Time) CloseReason {
	hdr := c.w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Accel-Buffering", "no")
	hdr.Del("Content-Encoding")
	c.w.WriteHeader(http.StatusOK)
	if err := c.write(retryFrame(c.h.cfg.Retry)); err != nil {
		return CloseWriteError
	}
	var expired <-chan time.Time
	if !until.IsZero() {
		t := time.NewTimer(time.Until(until))
		defer t.Stop()
		expired = t.C
	}
	if err := c.sub.Start(ctx, from, c); err != nil {
		return c.reason(ctx, err)
	}
	hb := c.h.cfg.Heartbeat
	timer := time.NewTimer(hb)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return CloseClientGone
		case <-c.sub.Done():
			return c.reason(ctx, nil)
		case <-expired:
			_ = c.write([]byte("event: auth-expired\ndata: {\"reason\":\"token expired\"}\n\n"))
			return CloseTokenExpired
		case ev := <-c.sub.Events():
			if err := c.live(ev); err != nil {
				return c.reason(ctx, err)
			}
			if c.sub.Lagged() { // a repair burst overflowed the queue: read the rest from the store
				if err := c.sub.CatchUp(ctx, c); err != nil {
					return c.reason(ctx, err)
				}
			}
		case <-timer.C:
			if idle := time.Since(c.lastWrite); idle < hb {
				timer.Reset(hb - idle) // something was written meanwhile: the stream is not silent yet
				continue
			}
			if err := c.Idle(); err != nil {
				return c.reason(ctx, err)
			}
			timer.Reset(hb)
		}
	}
}

// reason maps how a stream ended to its close reason. The subscription's own end comes first: an evicted client's
// last write fails and net/http then cancels the request context, but the cause was the eviction. On shutdown the
// client gets a fresh jittered retry hint, so a whole hub's clients do not reconnect at the same moment.
func (c *conn) reason(ctx context.Context, err error) CloseReason {
	switch c.sub.Reason() {
	case hub.ReasonSlow:
		return CloseSlow
	case hub.ReasonShutdown:
		_ = c.writeFinal(retryFrame(c.h.cfg.Retry))
		return CloseShutdown
	}
	// A write that missed its deadline, or that the kernel gave up on (TCP_USER_TIMEOUT: nothing acknowledged, or a
	// window closed for that long), is a client that stopped reading, even though net/http cancels the request
	// context after any failed write; other failures with the context gone are a client that left.
	var ended *hub.EndedError
	switch {
	case err == nil || errors.As(err, &ended):
		return CloseClientGone
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, syscall.ETIMEDOUT), ctx.Err() == nil:
		return CloseWriteError
	}
	return CloseClientGone
}

func retryFrame(base time.Duration) []byte {
	return []byte("retry: " + strconv.FormatInt(jitter(base).Milliseconds(), 10) + "\n\n")
}

// live takes ev and whatever else is queued, and writes them with one write and one flush.
func (c *conn) live(ev *hub.Event) error {
	bp := batchPool.Get().(*[]*hub.Event)
	batch := append((*bp)[:0], ev)
	for len(batch) < maxBatch {
		select {
		case ev := <-c.sub.Events():
			batch = append(batch, ev)
			continue
		default:
		}
		break
	}
	err := c.send(batch, true)
	clear(batch) // pooled slices must not keep events alive
	*bp = batch[:0]
	batchPool.Put(bp)
	return err
}

// Deliver implements hub.Sink: it writes replayed events.
func (c *conn) Deliver(batch []*hub.Event) error { return c.send(batch, false) }

// Idle implements hub.Sink: it writes a heartbeat when the stream has been silent long enough.
func (c *conn) Idle() error {
	if time.Since(c.lastWrite) < c.h.cfg.Heartbeat {
		return nil
	}
	c.h.cfg.Metrics.heartbeats.Inc()
	return c.write(heartbeat)
}

// send writes batch with one write and one flush. Live events pass through Accept one at a time, as they are
// framed, so a multi-topic cursor names only events at or before its own frame: a client cut off in the middle of
// the batch resumes from exactly what it received.
func (c *conn) send(batch []*hub.Event, live bool) error {
	if len(batch) == 0 {
		return nil
	}
	bp := bufPool.Get().(*[]byte)
	b := (*bp)[:0]
	n := 0
	for _, ev := range batch {
		if live {
			if !c.sub.Accept(ev) {
				continue
			}
			batch[n] = ev // live batches are the conn's own; replayed pages are shared and left alone
		}
		n++
		wire := ev.Wire(Encode)
		if c.multi && ev.Stored() {
			b = append(b, "id: "...)
			b = appendCursor(b, c.sub, ev)
			b = append(b, '\n')
			wire = wire[idLineLen(ev):]
		}
		b = append(b, wire...)
	}
	var err error
	now := time.Now() // one clock read per batch: on some VMs it costs as much as the rest of a delivery
	if len(b) > 0 {
		err = c.writeAt(b, now)
	}
	if cap(b) <= 256<<10 { // a huge batch's buffer is left to the GC rather than kept in the pool
		*bp = b[:0]
		bufPool.Put(bp)
	}
	if err != nil {
		return err
	}
	batch = batch[:n]
	c.delivered += int64(n)
	m := c.h.cfg.Metrics
	m.delivered.Add(float64(n))
	if live {
		ms := now.UnixMilli()
		for _, ev := range batch {
			if ev.Stored() {
				m.latency.Observe(float64(ms-int64(ev.ID.Ms)) / 1000)
			}
		}
	}
	return nil
}

// errEnded stops a write to a subscription that has ended.
var errEnded = errors.New("subscription ended")

// write sends b and flushes it within the write timeout, which is set per stream rather than server-wide (the
// server's WriteTimeout would cut every long-lived stream). The subscription's end sets the deadline to now
// (OnEnd); checking Done after setting ours means that one of the two always comes last, so an evicted client is
// never written to for long.
func (c *conn) write(b []byte) error { return c.writeAt(b, time.Now()) }

// writeAt is write at a time the caller has read already. Arming a deadline costs two clock reads and a runtime
// timer update, more than the rest of a delivery, so it is re-armed only once it is WriteTimeout/8 old: every write
// still has between 7/8 of WriteTimeout and all of it, and a stuck client is never kept longer than WriteTimeout.
func (c *conn) writeAt(b []byte, now time.Time) error {
	if !now.Before(c.rearm) {
		wt := c.h.cfg.WriteTimeout
		_ = c.rc.SetWriteDeadline(now.Add(wt))
		c.rearm = now.Add(wt / 8)
	}
	select {
	case <-c.sub.Done():
		return errEnded
	default:
	}
	return c.flushOut(b, now)
}

// writeFinal writes the last frame of a stream that has ended, within a short deadline.
func (c *conn) writeFinal(b []byte) error {
	now := time.Now()
	_ = c.rc.SetWriteDeadline(now.Add(min(c.h.cfg.WriteTimeout, time.Second)))
	c.rearm = time.Time{}
	return c.flushOut(b, now)
}

func (c *conn) flushOut(b []byte, now time.Time) error {
	if _, err := c.w.Write(b); err != nil {
		return err
	}
	if err := c.rc.Flush(); err != nil {
		return err
	}
	c.lastWrite = now
	return nil
}
