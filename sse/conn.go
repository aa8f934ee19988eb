package sse

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
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

// conn is one open stream: what it writes and how. One goroutine at a time uses it: the handler's, or for a
// detached stream whichever goroutine runs it (see detached).
type conn struct {
	h     *Handler
	out   output
	sub   *hub.Subscription
	multi bool
	raw   *rawOutput // out, when it is the raw connection: batches are framed as chunks here; nil through net/http
	// lastWrite is when the stream last wrote, in nanoseconds of the monotonic clock (see mono); the heartbeat
	// wheel reads it from its own goroutine.
	lastWrite atomic.Int64
	rearm     time.Time // when the write deadline must be pushed back again
	delivered int64
}

func newConn(h *Handler, out output, sub *hub.Subscription) *conn {
	raw, _ := out.(*rawOutput)
	c := &conn{h: h, out: out, sub: sub, multi: len(sub.Topics()) > 1, raw: raw}
	c.lastWrite.Store(mono(time.Now()))
	return c
}

// epoch anchors mono: time.Time keeps a monotonic reading, so differences from it ignore wall-clock jumps.
var epoch = time.Now()

func mono(t time.Time) int64 { return int64(t.Sub(epoch)) }

// silent reports whether nothing was written for a heartbeat period, less slack, before now.
func (c *conn) silent(now time.Time, slack time.Duration) bool {
	return mono(now)-c.lastWrite.Load() >= int64(c.h.cfg.Heartbeat-slack)
}

// cut ends a write in progress now: an evicted client is usually stuck in a write to a full socket.
func (c *conn) cut() { c.out.cut() }

// open writes the response head of a stream served through net/http and the retry hint.
func (c *conn) open(w http.ResponseWriter) error {
	setStreamHeaders(w.Header())
	w.WriteHeader(http.StatusOK)
	return c.write(retryFrame(c.h.cfg.Retry))
}

func setStreamHeaders(hdr http.Header) {
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Accel-Buffering", "no")
	hdr.Del("Content-Encoding")
}

// serve streams until the stream ends and returns why. until is when the client's permission ends (zero: never).
func (c *conn) serve(ctx context.Context, w http.ResponseWriter, from []hub.From, until time.Time) CloseReason {
	c.sub.OnWake(func() {
		select {
		case <-c.sub.Done():
			c.cut()
		default:
		}
	})
	if err := c.open(w); err != nil {
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
	ready := c.sub.Ready()
	for {
		select {
		case <-ctx.Done():
			return CloseClientGone
		case <-c.sub.Done():
			return c.reason(ctx, nil)
		case <-expired:
			_ = c.write(authExpired)
			return CloseTokenExpired
		case <-ready:
			if _, err := c.live(); err != nil {
				return c.reason(ctx, err)
			}
			if c.sub.Lagged() { // a repair burst overflowed the queue: read the rest from the store
				if err := c.sub.CatchUp(ctx, c); err != nil {
					return c.reason(ctx, err)
				}
			}
		case <-timer.C:
			if idle := time.Duration(mono(time.Now()) - c.lastWrite.Load()); idle < hb {
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
	// window closed for that long), is a client that stopped reading. Other failures are a client that left: net/http
	// cancels the request context then; a raw stream sees the connection reset or closed.
	var ended *hub.EndedError
	switch {
	case err == nil || errors.As(err, &ended):
		return CloseClientGone
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, syscall.ETIMEDOUT):
		return CloseWriteError
	case c.raw != nil || ctx.Err() != nil:
		return CloseClientGone
	}
	return CloseWriteError
}

var authExpired = []byte("event: auth-expired\ndata: {\"reason\":\"token expired\"}\n\n")

func retryFrame(base time.Duration) []byte {
	return []byte("retry: " + strconv.FormatInt(jitter(base).Milliseconds(), 10) + "\n\n")
}

// live takes what is queued, up to maxBatch events, and writes it with one write and one flush. It reports whether
// there was anything to take.
func (c *conn) live() (bool, error) {
	bp := batchPool.Get().(*[]*hub.Event)
	batch := c.sub.Take((*bp)[:0], maxBatch)
	var err error
	if len(batch) > 0 {
		err = c.send(batch, true)
	}
	clear(batch) // pooled slices must not keep events alive
	*bp = batch[:0]
	batchPool.Put(bp)
	return len(batch) > 0, err
}

// Deliver implements hub.Sink: it writes replayed events.
func (c *conn) Deliver(batch []*hub.Event) error { return c.send(batch, false) }

// Idle implements hub.Sink: it writes a heartbeat when the stream has been silent long enough.
func (c *conn) Idle() error { return c.heartbeat(0) }

// heartbeat writes the heartbeat comment if the stream has been silent for the heartbeat period less slack.
func (c *conn) heartbeat(slack time.Duration) error {
	if !c.silent(time.Now(), slack) {
		return nil
	}
	c.h.cfg.Metrics.heartbeats.Inc()
	if c.raw != nil {
		return c.write(heartbeatChunk)
	}
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
	room := 0
	if c.raw != nil {
		room = chunkRoom
	}
	b := (*bp)[:room]
	n := 0
	for _, ev := range batch {
		if live {
			if c.sub.Advance(ev) {
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
	if len(b) > room {
		out := b
		if c.raw != nil {
			b, out = chunkInPlace(b)
		}
		err = c.writeAt(out, now)
	}
	// A huge batch's buffer is left to the GC rather than kept in the pool; so is one a raw output holds as pending.
	if cap(b) <= 256<<10 && (c.raw == nil || !c.raw.blocked()) {
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
		_ = c.out.setWriteDeadline(now.Add(wt))
		c.rearm = now.Add(wt / 8)
	}
	select {
	case <-c.sub.Done():
		return errEnded
	default:
	}
	return c.flushOut(b, now)
}

// writeFinal writes the last frame p of a stream that has ended, within a short deadline; a raw stream also ends
// its chunked body (net/http does that for the others when the handler returns). On a shared worker the frame goes
// out only if the socket takes it at once: the connection closes next either way.
func (c *conn) writeFinal(p []byte) error {
	now := time.Now()
	c.out.finalDeadline(now.Add(min(c.h.cfg.WriteTimeout, time.Second)))
	c.rearm = time.Time{}
	if c.raw != nil {
		p = append(chunk(p), lastChunk...)
	}
	return c.flushOut(p, now)
}

func (c *conn) flushOut(b []byte, now time.Time) error {
	if err := c.out.write(b); err != nil {
		return err
	}
	c.lastWrite.Store(mono(now))
	return nil
}
