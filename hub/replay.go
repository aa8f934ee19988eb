package hub

import (
	"context"
	"time"
)

// From is where a subscription starts in one topic.
type From struct {
	// After resumes after this id when Set; otherwise the subscription starts at the topic's newest event.
	After ID
	Set   bool
	// Earliest (with Set and a zero After) starts at the oldest event the topic still holds: history trimmed
	// below it is no gap to this client, so no reset is sent for it.
	Earliest bool
	// History replays the last History events of a topic that has no After (a fresh connect).
	History int
}

// Sink receives what Start replays. Start calls it from the caller's goroutine only.
type Sink interface {
	// Deliver writes events in order; an error ends Start.
	Deliver(batch []*Event) error
	// Idle is called about once a second while Start waits for the store; a sink may write a heartbeat there.
	Idle() error
}

// idleEvery is how often Start calls Sink.Idle while it waits (tests run in a synctest bubble, where it is free).
const idleEvery = time.Second

// Start hands a subscription from history over to live delivery. It waits until the live feed of every topic is
// running, then replays each topic from its From to the stream's end through sink. Live events queued meanwhile are
// kept; Advance later reports those already replayed as duplicates. If the queue overflowed during the replay, Start drains it and
// reads the stream again from where it got to, so a long replay never turns into an eviction.
// When Start returns nil, every later event arrives through Take.
func (s *Subscription) Start(ctx context.Context, from []From, sink Sink) error {
	for i, f := range from {
		if f.Set {
			s.pos[i].last, s.pos[i].set = f.After, true
		}
	}
	if err := s.waitReady(ctx, sink); err != nil {
		return err
	}
	return s.replayAll(ctx, from, sink)
}

// Lagged reports whether a repair burst overflowed the queue during live delivery; the consumer then calls CatchUp.
func (s *Subscription) Lagged() bool { return s.state.Load() == stateLagged }

// CatchUp reads what a lagged subscription missed from the store, through sink, and hands it back to live delivery.
// Events still queued are dropped first: the stored ones come back, in order, from the last delivered id.
func (s *Subscription) CatchUp(ctx context.Context, sink Sink) error {
	if !s.state.CompareAndSwap(stateLagged, stateReplaying) {
		if s.state.Load() == stateEnded {
			return s.endedErr()
		}
		return nil
	}
	s.drain()
	return s.replayAll(ctx, nil, sink)
}

// replayAll replays every topic to the stream's end and switches to live delivery, reading again while the queue
// overflowed meanwhile. from is the request's start (nil: continue from the last delivered ids).
func (s *Subscription) replayAll(ctx context.Context, from []From, sink Sink) error {
	first := from != nil
	for {
		for i := range s.topics {
			var f From
			if first {
				f = from[i]
			}
			if err := s.replayTopic(ctx, i, f, first, sink); err != nil {
				return err
			}
		}
		first = false
		if s.state.CompareAndSwap(stateReplaying, stateLive) {
			return nil
		}
		if !s.state.CompareAndSwap(stateLagged, stateReplaying) {
			return s.endedErr()
		}
		s.drain()
	}
}

func (s *Subscription) endedErr() error {
	return &EndedError{Reason: s.Reason()}
}

// EndedError is returned by Start when the subscription ended under it.
type EndedError struct{ Reason Reason }

func (e *EndedError) Error() string { return "subscription ended: " + string(e.Reason) }

func (s *Subscription) drain() { s.q.drop() }

func (s *Subscription) waitReady(ctx context.Context, sink Sink) error {
	tick := time.NewTicker(idleEvery)
	defer tick.Stop()
	for i := range s.pos {
		for ready := false; !ready; {
			select {
			case <-s.pos[i].ready:
				ready = true
			case <-tick.C:
				if err := sink.Idle(); err != nil {
					return err
				}
			case <-s.done:
				return s.endedErr()
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

// retry runs op until it succeeds, backing off and keeping the sink alive while the store is unreachable.
func (s *Subscription) retry(ctx context.Context, sink Sink, op func() error) error {
	wait := 50 * time.Millisecond
	for {
		err := op()
		if err == nil {
			return nil
		}
		select {
		case <-time.After(wait):
		case <-s.done:
			return s.endedErr()
		case <-ctx.Done():
			return ctx.Err()
		}
		if err := sink.Idle(); err != nil {
			return err
		}
		wait = min(wait*2, idleEvery)
	}
}
