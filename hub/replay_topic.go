package hub

import (
	"context"
	"time"
)

// replayTopic brings topic i up to the stream's end. On the first pass it resolves the starting position from f;
// later passes (after an overflow) continue from the last delivered id.
func (s *Subscription) replayTopic(ctx context.Context, i int, f From, first bool, sink Sink) error {
	started := time.Now()
	replayed := 0
	if first && !f.Set {
		n, more, err := s.startFresh(ctx, i, f.History, sink)
		if err != nil || !more {
			return err
		}
		replayed = n
	}
	p := &s.pos[i]
	topic := s.topics[i]
	after := p.last
	for {
		var page []*Event
		var more bool
		if err := s.retry(ctx, sink, func() (err error) {
			page, more, err = s.hub.store.Read(ctx, topic, p.last, s.hub.cfg.ReplayPage)
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
		if page[0].Prev != p.last && !(first && f.Earliest && p.last.IsZero()) {
			reason := GapReason(p.last, page[0].Prev)
			s.hub.cfg.Logger.Debug().Str("topic", topic).Str("after", p.last.String()).Str("reason", reason).Msg("replay: reset")
			if err := sink.Deliver([]*Event{NewReset(topic, reason, page[0].ID)}); err != nil {
				return err
			}
		}
		if err := deliverBatches(sink, page); err != nil {
			return err
		}
		replayed += len(page)
		p.last = page[len(page)-1].ID
		if !more {
			break
		}
	}
	s.observeReplay(replayed, started)
	s.hub.cfg.Logger.Debug().Str("topic", topic).Str("after", after.String()).Str("to", p.last.String()).Int("events", replayed).
		Dur("took_ms", time.Since(started)).Msg("replay")
	return nil
}

func (s *Subscription) observeReplay(n int, started time.Time) {
	m := s.hub.cfg.Metrics
	m.received[SourceReplay].Add(float64(n))
	m.replayEvents.Observe(float64(n))
	m.replaySeconds.Observe(time.Since(started).Seconds())
}

// Bounds of one batch handed to the sink during a replay: the sink writes a batch as one buffer, and a client that
// does not read keeps its write, and that buffer, waiting.
const (
	replayBatchEvents = 128
	replayBatchBytes  = 128 << 10
)

// deliverBatches hands page to sink in small batches.
func deliverBatches(sink Sink, page []*Event) error {
	for len(page) > 0 {
		n, size := 0, 0
		for n < len(page) && n < replayBatchEvents && (n == 0 || size+len(page[n].Data) <= replayBatchBytes) {
			size += len(page[n].Data)
			n++
		}
		if err := sink.Deliver(page[:n]); err != nil {
			return err
		}
		page = page[n:]
	}
	return nil
}

// startFresh positions a topic without a resume id at its newest event, replaying the last n first when asked. It
// returns how many it replayed and whether more of them follow in the stream (the tail did not fit in one page):
// the caller then reads on from the position.
func (s *Subscription) startFresh(ctx context.Context, i, n int, sink Sink) (int, bool, error) {
	p := &s.pos[i]
	var tail []*Event
	var more bool
	if err := s.retry(ctx, sink, func() (err error) {
		tail, more, err = s.hub.store.Tail(ctx, s.topics[i], max(1, min(n, s.hub.cfg.MaxReplay)))
		return err
	}); err != nil {
		return 0, false, err
	}
	p.set = true
	if len(tail) == 0 {
		return 0, false, nil // an empty stream: everything from its first event on is new
	}
	p.last = tail[len(tail)-1].ID
	if n <= 0 {
		return 0, false, nil
	}
	if more {
		return len(tail), true, deliverBatches(sink, tail)
	}
	s.hub.cfg.Logger.Debug().Str("topic", s.topics[i]).Str("from", tail[0].IDText).Str("to", p.last.String()).
		Int("events", len(tail)).Msg("replay: history")
	s.hub.cfg.Metrics.received[SourceReplay].Add(float64(len(tail)))
	s.hub.cfg.Metrics.replayEvents.Observe(float64(len(tail)))
	return len(tail), false, deliverBatches(sink, tail)
}

// checkNewest handles a resume position with nothing after it: fine if the stream's newest entry is that position or
// newer (an invalid entry may follow it), but a position newer than anything stored means Redis lost the events the
// client saw.
func (s *Subscription) checkNewest(ctx context.Context, i int, sink Sink) error {
	p := &s.pos[i]
	if p.last.IsZero() {
		return nil
	}
	newest, err := s.newest(ctx, i, sink)
	if err != nil {
		return err
	}
	if !newest.Less(p.last) {
		return nil
	}
	s.logReset(i, newest, ResetLost)
	p.last = newest
	return sink.Deliver([]*Event{NewReset(s.topics[i], ResetLost, ID{})})
}

// skipToEnd answers a replay larger than MaxReplay with a reset and moves the position to the stream's end; the
// client reloads the snapshot instead of receiving the events one by one, and continues with live events.
func (s *Subscription) skipToEnd(ctx context.Context, i int, sink Sink) error {
	p := &s.pos[i]
	newest, err := s.newest(ctx, i, sink)
	if err != nil {
		return err
	}
	s.logReset(i, newest, ResetReplayLimit)
	if p.last.Less(newest) {
		p.last = newest
	}
	return sink.Deliver([]*Event{NewReset(s.topics[i], ResetReplayLimit, ID{})})
}

// newest reads the id of the newest entry stored for topic i, retried as every replay read is.
func (s *Subscription) newest(ctx context.Context, i int, sink Sink) (newest ID, err error) {
	err = s.retry(ctx, sink, func() (err error) {
		newest, err = s.hub.store.Newest(ctx, s.topics[i])
		return err
	})
	return newest, err
}

// logReset logs at debug level a reset of topic i's position to newest, and why.
func (s *Subscription) logReset(i int, newest ID, reason string) {
	s.hub.cfg.Logger.Debug().Str("topic", s.topics[i]).Str("after", s.pos[i].last.String()).
		Str("newest", newest.String()).Str("reason", reason).Msg("replay: reset")
}
