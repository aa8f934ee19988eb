package sse

import (
	"context"
	"time"

	"github.com/syncverse/hub/hub"
)

// serve runs a stream that net/http serves (HTTP/2, TLS, or any stream when the raw engine is off) on the request's
// goroutine until it ends, and returns why: one select over the client leaving, the subscription (its queue and its
// end), the permission's end and the heartbeat timer, each followed by a step.
func (s *stream) serve(ctx context.Context, from []hub.From) CloseReason {
	s.sub.OnWake(s.cutWhenEnded)
	defer s.out.release() // before the handler returns: a wake that comes later must not cut its ResponseWriter
	if err := s.write(s.out.open(retryFrame(s.h.cfg.Retry))); err != nil {
		return CloseWriteError
	}
	var expired <-chan time.Time
	if !s.until.IsZero() {
		t := time.NewTimer(time.Until(s.until))
		defer t.Stop()
		expired = t.C
	}
	if err := s.sub.Start(ctx, from, s); err != nil {
		return s.reason(ctx, err)
	}
	if s.startID {
		if err := s.writeStart(); err != nil {
			return CloseWriteError
		}
	}
	hb := s.h.cfg.Heartbeat
	timer := time.NewTimer(hb)
	defer timer.Stop()
	ready := s.sub.Ready()
	beat := false
	for {
		if res, reason := s.step(ctx, true); res == stepEnd {
			return reason
		}
		if beat { // the next heartbeat is due a period after the last write, whatever it was
			idle := time.Duration(mono(time.Now()) - s.lastWrite.Load())
			timer.Reset(hb - min(max(idle, 0), hb-time.Millisecond))
			beat = false
		}
		s.rest()
		select {
		case <-ctx.Done():
			return CloseClientGone
		case <-s.sub.Done():
		case <-ready:
		case <-expired:
			s.expired.Store(true)
		case <-timer.C:
			s.due.Store(true)
			beat = true
		}
	}
}
