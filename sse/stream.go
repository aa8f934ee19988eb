package sse

import (
	"context"
	"errors"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/delay"
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

// stream is one open /events stream: what it writes, through which output, and until when. One goroutine at a time
// runs it: the request's (serve, in stream_http.go), or for a raw stream whichever runs it (see rawStream). Both
// call step.
type stream struct {
	h     *Handler
	out   output
	room  int // out.room()
	sub   *hub.Subscription
	multi bool
	until time.Time // when the client's permission ends; zero: never
	// lastWrite is when the stream last wrote, in nanoseconds of the monotonic clock (see mono); the heartbeat
	// wheel reads it from its own goroutine.
	lastWrite atomic.Int64
	due       atomic.Bool // a heartbeat may be due (set by the wheel or the heartbeat timer)
	expired   atomic.Bool // the client's permission ran out (set by its timer)
	rearm     time.Time   // when the write deadline must be pushed back again; zero: it is not armed
	delivered int64
	startID   bool // write startFrame once the replay is done (start_id=1)
}

func (s *stream) init(h *Handler, out output, sub *hub.Subscription, until time.Time) {
	s.h, s.out, s.room, s.sub, s.multi, s.until = h, out, out.room(), sub, len(sub.Topics()) > 1, until
	s.lastWrite.Store(mono(time.Now()))
}

// epoch anchors mono: time.Time keeps a monotonic reading, so differences from it ignore wall-clock jumps.
var epoch = time.Now()

func mono(t time.Time) int64 { return int64(t.Sub(epoch)) }

// silent reports whether nothing was written for a heartbeat period, less slack, before now.
func (s *stream) silent(now time.Time, slack time.Duration) bool {
	return mono(now)-s.lastWrite.Load() >= int64(s.h.cfg.Heartbeat-slack)
}

// past reports whether the client's permission has ended at now.
func (s *stream) past(now time.Time) bool { return !s.until.IsZero() && !now.Before(s.until) }

// cutWhenEnded is the stream's part of the subscription's wake: its end cuts a write in progress short, since an
// evicted client is usually stuck in a write to a full socket. On shutdown the write has until the final deadline
// instead (finalWithin): cut at once, it would take the retry hint with it (over HTTP/2 a deadline in the past
// resets the stream), and the write in progress is often one the client has already read, only not yet returned.
// A client that reads gets the rest and then the hint; one whose socket stays full that long is cut without it.
func (s *stream) cutWhenEnded() {
	select {
	case <-s.sub.Done():
		at := time.Now()
		if s.sub.Reason() == hub.ReasonShutdown {
			at = at.Add(s.finalWithin())
		}
		s.out.cut(at)
	default:
	}
}

// finalWithin is how long a stream that has ended may take over its last words.
func (s *stream) finalWithin() time.Duration { return min(s.h.cfg.WriteTimeout, time.Second) }

// step results
const (
	stepIdle = iota // nothing left to do
	stepMore        // a batch was written: give the other streams a turn, then look again
	stepEnd         // the stream has ended
	stepMove        // a write is pending, or a catch-up must read the store: continue on a goroutine of its own
)

// step does a round of the stream's work: the end first, then the expiry, a catch-up, the queued events, a heartbeat.
// On a goroutine of its own (own) it writes until the queue is empty; on a shared worker it writes one batch at
// most, stops at a write the socket did not take whole, and leaves a catch-up (a store read) to a goroutine of the
// stream's own. ctx bounds the store reads.
func (s *stream) step(ctx context.Context, own bool) (res int, reason CloseReason) {
	select {
	case <-s.sub.Done():
		return stepEnd, s.reason(ctx, nil)
	default:
	}
	if s.expired.Load() {
		return stepEnd, s.expire()
	}
	for {
		if s.sub.Lagged() { // a repair burst overflowed the queue: read the rest from the store
			if !own {
				return stepMove, ""
			}
			if err := s.sub.CatchUp(ctx, s); err != nil {
				return stepEnd, s.reason(ctx, err)
			}
		}
		took, err := s.live()
		if err != nil {
			return stepEnd, s.reason(ctx, err)
		}
		if !took {
			break
		}
		switch {
		case s.out.holding():
			return stepMove, ""
		case !own:
			return stepMore, ""
		}
	}
	if s.due.Swap(false) {
		if err := s.heartbeat(beatEvery(s.h.cfg.Heartbeat)); err != nil {
			return stepEnd, s.reason(ctx, err)
		}
		if s.out.holding() {
			return stepMove, ""
		}
	}
	return stepIdle, ""
}

// rest is called when the stream waits: an output whose deadline would act meanwhile clears it.
func (s *stream) rest() {
	if !s.rearm.IsZero() && s.out.rest() {
		s.rearm = time.Time{}
	}
}

// reason maps how a stream ended to its close reason. The subscription's own end comes first: an evicted client's
// last write fails and net/http then cancels the request context, but the cause was the eviction. On shutdown the
// client gets a fresh jittered retry hint, so a whole hub's clients do not reconnect at the same moment.
func (s *stream) reason(ctx context.Context, err error) CloseReason {
	switch s.sub.Reason() {
	case hub.ReasonSlow:
		return CloseSlow
	case hub.ReasonShutdown:
		_ = s.writeFinal(retryFrame(s.h.cfg.Retry))
		return CloseShutdown
	}
	// A write that missed its deadline, or that the kernel gave up on (TCP_USER_TIMEOUT: nothing acknowledged, or a
	// window closed for that long), is a client that stopped reading. Other failures are a client that left: net/http
	// cancels the request context then; a raw stream sees the connection reset or closed.
	var ended *hub.EndedError
	switch {
	case errors.Is(err, errExpired):
		return s.expire()
	case err == nil || errors.As(err, &ended):
		return CloseClientGone
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, syscall.ETIMEDOUT):
		return CloseWriteError
	case s.out.leftOnError() || ctx.Err() != nil:
		return CloseClientGone
	}
	return CloseWriteError
}

var authExpired = []byte("event: auth-expired\ndata: {\"reason\":\"token expired\"}\n\n")

// expire ends a stream whose permission ran out: it says so, then the stream ends.
func (s *stream) expire() CloseReason {
	_ = s.writeFinal(authExpired)
	return CloseTokenExpired
}

func retryFrame(base time.Duration) []byte {
	return []byte("retry: " + strconv.FormatInt(delay.Jitter(base/2, base*3/2-1).Milliseconds(), 10) + "\n\n")
}

// errExpired stops a write past the client's permission, whatever delivers it: live, replay or catch-up.
var errExpired = errors.New("permission expired")

// live takes what is queued, up to maxBatch events, and writes it with one write and one flush. It reports whether
// there was anything to take.
func (s *stream) live() (bool, error) {
	bp := batchPool.Get().(*[]*hub.Event)
	batch := s.sub.Take((*bp)[:0], maxBatch)
	var err error
	if len(batch) > 0 {
		err = s.send(batch, true)
	}
	clear(batch) // pooled slices must not keep events alive
	*bp = batch[:0]
	batchPool.Put(bp)
	return len(batch) > 0, err
}

// Deliver implements hub.Sink: it writes replayed events.
func (s *stream) Deliver(batch []*hub.Event) error { return s.send(batch, false) }

// Idle implements hub.Sink: it writes a heartbeat when the stream has been silent long enough.
func (s *stream) Idle() error { return s.heartbeat(0) }

// heartbeat writes the heartbeat comment if the stream has been silent for the heartbeat period less slack.
func (s *stream) heartbeat(slack time.Duration) error {
	now := time.Now()
	if s.past(now) {
		return errExpired
	}
	if !s.silent(now, slack) {
		return nil
	}
	s.h.cfg.Metrics.heartbeats.Inc()
	return s.writeAt(s.out.heartbeat(), now)
}

// send writes batch with one write and one flush, unless the client's permission has ended. Live events pass
// through Advance one at a time, as they are framed, so a multi-topic cursor names only events at or before its own
// frame: a client cut off in the middle of the batch resumes from exactly what it received.
func (s *stream) send(batch []*hub.Event, live bool) error {
	if len(batch) == 0 {
		return nil
	}
	now := time.Now() // one clock read per batch: on some VMs it costs as much as the rest of a delivery
	if s.past(now) {
		return errExpired
	}
	bp := bufPool.Get().(*[]byte)
	b := (*bp)[:s.room]
	n := 0
	for _, ev := range batch {
		if live {
			if s.sub.Advance(ev) {
				continue // a duplicate of a replayed event
			}
			batch[n] = ev // live batches are the stream's own; replayed pages are shared and left alone
		}
		n++
		wire := ev.Wire(Encode)
		if s.multi && ev.Stored() {
			b = append(b, "id: "...)
			b = appendCursor(b, s.sub, ev)
			b = append(b, '\n')
			wire = wire[idLineLen(ev):]
		}
		b = append(b, wire...)
	}
	var err error
	if len(b) > s.room {
		var out []byte
		b, out = s.out.frame(b)
		err = s.writeAt(out, now)
	}
	// A huge batch's buffer is left to the GC rather than kept in the pool; so is one the output holds as pending.
	if cap(b) <= 256<<10 && !s.out.holding() {
		*bp = b[:0]
		bufPool.Put(bp)
	}
	if err != nil {
		return err
	}
	batch = batch[:n]
	s.delivered += int64(n)
	m := s.h.cfg.Metrics
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

// writeStart writes the id-only frame of start_id=1 (appendStartFrame), framed for the output.
func (s *stream) writeStart() error {
	_, out := s.out.frame(appendStartFrame(make([]byte, s.room, s.room+64), s.sub))
	return s.write(out)
}

// errEnded stops a write to a subscription that has ended.
var errEnded = errors.New("subscription ended")

// write sends b and flushes it within the write timeout, which is set per stream rather than server-wide (the
// server's WriteTimeout would cut every long-lived stream).
func (s *stream) write(b []byte) error { return s.writeAt(b, time.Now()) }

// writeAt is write at a time the caller has read already. Arming a deadline costs two clock reads and a runtime
// timer update, more than the rest of a delivery, so it is re-armed only once it is WriteTimeout/8 old: every write
// still has between 7/8 of WriteTimeout and all of it, and a stuck client is never kept longer than WriteTimeout.
// The output refuses the write once the subscription has ended (its end cuts a write in progress: cutWhenEnded).
func (s *stream) writeAt(b []byte, now time.Time) error {
	if !now.Before(s.rearm) {
		wt := s.h.cfg.WriteTimeout
		s.out.setWriteDeadline(now.Add(wt))
		s.rearm = now.Add(wt / 8)
	}
	return s.flushOut(b, now)
}

// writeFinal writes the last frame p of a stream that has ended, within a short deadline, and ends the body where
// the output frames it (net/http does that itself when the handler returns). On a shared worker the frame goes out
// only if the socket takes it at once: the connection closes next either way.
func (s *stream) writeFinal(p []byte) error {
	now := time.Now()
	s.out.finalDeadline(now.Add(s.finalWithin()))
	s.rearm = time.Time{}
	return s.flushOut(s.out.last(p), now)
}

func (s *stream) flushOut(b []byte, now time.Time) error {
	if err := s.out.write(b); err != nil {
		return err
	}
	s.h.cfg.Metrics.written.Add(float64(len(b)))
	s.lastWrite.Store(mono(now))
	return nil
}
