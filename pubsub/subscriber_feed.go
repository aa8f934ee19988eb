package pubsub

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/hub"
)

// maxAhead bounds how far in the future (by this hub's clock) a live envelope's id may be. An id is Redis's time of
// the XADD, so a genuine one is never far ahead; an envelope beyond it did not come from the script, and taking its
// id as the topic's position would make every real event after it look delivered already. Such an envelope is
// dropped and the topic repaired from the stream, which is the truth; with a Redis clock more than this ahead of the
// hub's, events still arrive, through repairs.
const maxAhead = time.Minute

// process owns the followed topics' state: it subscribes, decodes, repairs and broadcasts, one item at a time, so
// each topic's events reach the hub in stream order.
func (s *Subscriber) process(ctx context.Context, b Broadcaster) {
	active := make(map[string]*feed)
	tick := time.NewTicker(s.cfg.TailCheck)
	defer tick.Stop()
	retry := time.NewTicker(250 * time.Millisecond)
	defer retry.Stop()
	for {
		tail := false
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-tick.C:
			tail = true
		case <-retry.C:
		}
		items, over := s.take()
		for _, it := range items {
			s.handle(ctx, b, active, it)
		}
		for _, t := range over {
			if f := active[t]; f != nil {
				f.repair = true
			}
		}
		if tail {
			s.tailCheck(ctx, active)
		}
		s.catchUp(ctx, b, active)
		s.m.followed.Set(float64(len(active)))
	}
}

func (s *Subscriber) handle(ctx context.Context, b Broadcaster, active map[string]*feed, it item) {
	switch it.kind {
	case itemFollow:
		active[it.topic] = it.feed
		if s.subscribe(ctx, s.keys.Channel(it.topic)) == nil {
			it.feed.state = feedSent
		}
	case itemUnfollow:
		if active[it.topic] == it.feed {
			delete(active, it.topic)
			_ = s.unsubscribe(ctx, s.keys.Channel(it.topic))
		}
	case itemConfirmed:
		if f := active[it.topic]; f != nil {
			if f.state == feedKnown {
				s.m.resubscriptions.Inc()
				f.repair = true // the connection was new: whatever was published while it was down is in the stream
			} else {
				f.state = feedConfirmed
				s.baseline(ctx, f)
			}
		}
	case itemMessage:
		if f := active[it.topic]; f != nil {
			s.live(ctx, b, f, it.payload)
		}
	}
}

// baseline records the stream's end when a topic's subscription is confirmed: everything after it will arrive live,
// so the feed is ready.
func (s *Subscriber) baseline(ctx context.Context, f *feed) {
	newest, err := s.newestOf(ctx, f.topic)
	if err != nil {
		return // catchUp tries again
	}
	f.found(newest)
}

// found gives a feed that knew no position its first one, and with it readiness: ready is closed exactly when the
// state reaches feedKnown, so the two are one fact.
func (f *feed) found(last hub.ID) {
	f.last, f.state = last, feedKnown
	close(f.ready)
}

func (s *Subscriber) live(ctx context.Context, b Broadcaster, f *feed, payload string) {
	ev, reason := decodeLive(f.topic, []byte(payload), s.max)
	if ev != nil && !ev.Stored() {
		if reason == "" {
			b.Broadcast(ev)
		}
		return
	}
	if reason == "" && ev.ID.Ms > uint64(time.Now().Add(maxAhead).UnixMilli()) {
		reason = dropBadEnvelope // not written by the script on a sane clock: a stray PUBLISH that looks like an envelope
	}
	if reason != "" {
		id := ""
		if ev != nil {
			id = ev.IDText
		}
		s.drop(f.topic, id, reason)
		// The envelope's own id and prev cannot be trusted; the stream can. A repair reads past the entry (dropping
		// it again if it is stored) without ever taking the envelope's word for where the stream is.
		f.repair = f.state == feedKnown
		return
	}
	if f.state != feedKnown { // the baseline read failed; the envelope itself tells where the stream was
		f.found(ev.Prev)
	}
	switch {
	case !f.last.Less(ev.ID):
		// already broadcast by a repair
	case ev.Prev == f.last && !f.repair:
		b.Broadcast(ev)
		f.last = ev.ID
	default:
		s.log.Debug().Str("topic", f.topic).Str("delivered", f.last.String()).Str("prev", ev.Prev.String()).Msg("gap: envelope does not follow")
		s.m.gaps.Inc()
		f.repair = true
		s.repairFeed(ctx, b, f)
	}
}

// catchUp finishes what failed earlier: unsent subscriptions, baselines, repairs.
func (s *Subscriber) catchUp(ctx context.Context, b Broadcaster, active map[string]*feed) {
	for _, f := range active {
		switch {
		case f.state == feedUnsent:
			if s.subscribe(ctx, s.keys.Channel(f.topic)) == nil {
				f.state = feedSent
			}
		case f.state == feedConfirmed:
			s.baseline(ctx, f)
		case f.repair:
			s.repairFeed(ctx, b, f)
		}
	}
}

// repairFeed reads the stream after the feed's last id and broadcasts what it finds, in order. A stream that does
// not continue that id (trimmed past it, or emptied by a Redis restart) is announced with a reset first.
func (s *Subscriber) repairFeed(ctx context.Context, b Broadcaster, f *feed) {
	const page = 1000
	for {
		from := f.last
		evs, examined, more, err := s.readRaw(ctx, f.topic, from, page, hub.SourceRepair)
		if err != nil {
			s.log.Debug().Err(err).Str("topic", f.topic).Str("after", from.String()).Msg("repair read failed; retrying")
			return // f.repair stays set: catchUp tries again
		}
		if len(evs) > 0 && evs[0].Prev != f.last {
			reason := hub.ResetTruncated
			if evs[0].Prev.IsZero() {
				reason = hub.ResetLost
			}
			s.log.Debug().Str("topic", f.topic).Str("after", from.String()).Str("reason", reason).Msg("repair: stream does not continue; reset")
			b.Broadcast(hub.NewReset(f.topic, reason, evs[0].ID))
		}
		s.log.Debug().Str("topic", f.topic).Str("after", from.String()).Str("to", examined.String()).Int("events", len(evs)).
			Msg("repair")
		for _, ev := range evs {
			b.Broadcast(ev)
		}
		// Past invalid entries too, so neither the next envelope nor the tail check meets them again.
		f.last = examined
		if len(evs) > 0 {
			s.m.repairs.Inc()
		}
		if !more {
			f.repair = false
			return
		}
	}
}

// tailCheck compares each topic's stream end with the last id broadcast, catching a lost final message that no
// later envelope would reveal.
func (s *Subscriber) tailCheck(ctx context.Context, active map[string]*feed) {
	if len(active) == 0 {
		return
	}
	pipe := s.rdb.Pipeline()
	cmds := make(map[*feed]*redis.XMessageSliceCmd, len(active))
	for _, f := range active {
		if f.state == feedKnown {
			cmds[f] = pipe.XRevRangeN(ctx, s.keys.Stream(f.topic), "+", "-", 1)
		}
	}
	_, _ = pipe.Exec(ctx)
	for f, c := range cmds {
		if m := c.Val(); len(m) == 1 {
			if id, err := hub.ParseID(m[0].ID); err == nil && f.last.Less(id) {
				s.log.Debug().Str("topic", f.topic).Str("delivered", f.last.String()).Str("stream_end", id.String()).Msg("tail check: gap")
				s.m.gaps.Inc()
				f.repair = true
			}
		}
	}
}
