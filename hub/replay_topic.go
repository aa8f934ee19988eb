package hub

import (
	"context"
	"time"
)

// replayTopic brings topic i up to the stream's end. On the first pass it resolves the starting position from f;
// later passes (after an overflow) continue from the last delivered id.
func (s *Subscription) replayTopic(ctx context.Context, i int, f From, first bool, sink Sink) error {
	p := &s.pos[i]
	topic := s.topics[i]
	m := s.hub.cfg.Metrics
	started := time.Now()
	if first && !f.Set {
		return s.startFresh(ctx, i, f.History, sink)
	}
	replayed := 0
	for {
		var page []*Event
		if err := s.retry(ctx, sink, func() (err error) {
			page, err = s.hub.store.Read(ctx, topic, p.last, s.hub.cfg.ReplayPage)
			return err
		}); err != nil {
			return err
		}
		if len(page) == 0 {
			if replayed == 0 {
				return s.checkNewest(ctx, i, sink)
			}
			break
		}
		if replayed+len(page) > s.hub.cfg.MaxReplay {
			return s.skipToEnd(ctx, i, sink)
		}
		if page[0].Prev != p.last {
			reason := ResetTruncated
			if page[0].Prev.IsZero() {
				reason = ResetLost
			}
			if err := sink.Deliver([]*Event{NewReset(topic, reason, page[0].ID)}); err != nil {
				return err
			}
		}
		if err := sink.Deliver(page); err != nil {
			return err
		}
		replayed += len(page)
		p.last = page[len(page)-1].ID
		if len(page) < s.hub.cfg.ReplayPage {
			break
		}
	}
	m.received[SourceReplay].Add(float64(replayed))
	m.replayEvents.Observe(float64(replayed))
	m.replaySeconds.Observe(time.Since(started).Seconds())
	return nil
}

// startFresh positions a topic without a resume id at its newest event, replaying the last n first when asked.
func (s *Subscription) startFresh(ctx context.Context, i, n int, sink Sink) error {
	p := &s.pos[i]
	var tail []*Event
	if err := s.retry(ctx, sink, func() (err error) {
		tail, err = s.hub.store.Tail(ctx, s.topics[i], max(1, min(n, s.hub.cfg.MaxReplay)))
		return err
	}); err != nil {
		return err
	}
	p.set = true
	if len(tail) == 0 {
		return nil // an empty stream: everything from its first event on is new
	}
	p.last = tail[len(tail)-1].ID
	if n <= 0 {
		return nil
	}
	s.hub.cfg.Metrics.received[SourceReplay].Add(float64(len(tail)))
	s.hub.cfg.Metrics.replayEvents.Observe(float64(len(tail)))
	return sink.Deliver(tail)
}

// checkNewest handles a resume position with nothing after it: fine if the stream's newest entry is that position or
// newer (an invalid entry may follow it), but a position newer than anything stored means Redis lost the events the
// client saw.
func (s *Subscription) checkNewest(ctx context.Context, i int, sink Sink) error {
	p := &s.pos[i]
	if p.last.IsZero() {
		return nil
	}
	var newest ID
	if err := s.retry(ctx, sink, func() (err error) {
		newest, err = s.hub.store.Newest(ctx, s.topics[i])
		return err
	}); err != nil {
		return err
	}
	if !newest.Less(p.last) {
		return nil
	}
	p.last = newest
	return sink.Deliver([]*Event{NewReset(s.topics[i], ResetLost, ID{})})
}

// skipToEnd answers a replay larger than MaxReplay with a reset and moves the position to the stream's end; the
// client reloads the snapshot instead of receiving the events one by one, and continues with live events.
func (s *Subscription) skipToEnd(ctx context.Context, i int, sink Sink) error {
	p := &s.pos[i]
	var newest ID
	if err := s.retry(ctx, sink, func() (err error) {
		newest, err = s.hub.store.Newest(ctx, s.topics[i])
		return err
	}); err != nil {
		return err
	}
	if p.last.Less(newest) {
		p.last = newest
	}
	return sink.Deliver([]*Event{NewReset(s.topics[i], ResetReplayLimit, ID{})})
}
