package pubsub

import (
	"context"
	"time"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/delay"
)

// maxAhead bounds how far in the future (by this hub's clock) a live envelope's id may be. An id is Redis's time of
// the XADD, so a genuine one is never far ahead; an envelope beyond it did not come from the script, and taking its
// id as the topic's position would make every real event after it look delivered already. Such an envelope is
// dropped and the topic repaired from the stream, which is the truth; with a Redis clock more than this ahead of the
// hub's, events still arrive, through repairs.
const maxAhead = time.Minute

// processor is the state of the process goroutine, which alone touches it and the feeds' fields (but ready).
type processor struct {
	*Subscriber
	b      hub.Broadcaster
	active map[string]*feed
	// pending holds the feeds with work left (unsent, without a baseline, to repair), so that what a pass over the
	// queue costs does not grow with the number of topics that are simply followed.
	pending map[*feed]struct{}
	r       round
}

// process owns the followed topics' state: it subscribes, decodes, repairs and broadcasts, one item at a time, so
// each topic's events reach the hub in stream order.
func (s *Subscriber) process(ctx context.Context, b hub.Broadcaster) {
	p := &processor{Subscriber: s, b: b, active: make(map[string]*feed), pending: make(map[*feed]struct{})}
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
			p.handle(ctx, it)
		}
		p.endRound(ctx)
		for _, t := range over {
			if f := p.active[t]; f != nil {
				f.repair = true
				p.track(f)
			}
		}
		if tail {
			p.tailCheck(ctx, time.Now())
		}
		p.catchUp(ctx)
		s.m.followed.Set(float64(len(p.active)))
	}
}

func (p *processor) handle(ctx context.Context, it item) {
	switch it.kind {
	case itemFollow:
		p.active[it.topic] = it.feed
		p.subscribeLater(ctx, it.feed)
	case itemUnfollow:
		if p.active[it.topic] == it.feed {
			delete(p.active, it.topic)
			delete(p.pending, it.feed)
			p.unsubscribeLater(ctx, it.topic)
		}
	case itemConfirmed:
		if f := p.active[it.topic]; f != nil {
			if f.state == feedKnown {
				p.m.resubscriptions.Inc()
				f.repair = true // the connection was new: whatever was published while it was down is in the stream
			} else {
				f.state = feedConfirmed
				p.r.baselines = append(p.r.baselines, f)
			}
			p.track(f)
		}
	case itemMessage:
		if f := p.active[it.topic]; f != nil {
			p.live(ctx, f, it.payload)
			p.track(f)
		}
	}
}

// track remembers a feed that has work left for catchUp.
func (p *processor) track(f *feed) {
	if f.repair || f.state == feedUnsent || f.state == feedConfirmed {
		p.pending[f] = struct{}{}
	}
}

// found gives a feed that knew no position its first one, and with it readiness: ready is closed exactly when the
// state reaches feedKnown, so the two are one fact. A new feed is checked at the next tail checks (a live message
// lost around its subscription shows there) and joins the sweep at a random point of it, so sweeps stay even.
func (f *feed) found(last hub.ID, now time.Time, sweep time.Duration) {
	f.last, f.state = last, feedKnown
	f.hot = hotChecks
	f.sweepAt = now.Add(delay.Jitter(1, sweep))
	close(f.ready)
}

func (p *processor) live(ctx context.Context, f *feed, payload string) {
	ev, reason := decodeLive(f.topic, []byte(payload), p.max)
	if ev != nil && !ev.Stored() {
		if reason == "" {
			p.b.Broadcast(ev)
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
		p.drop(f.topic, id, reason)
		// The envelope's own id and prev cannot be trusted; the stream can. A repair reads past the entry (dropping
		// it again if it is stored) without ever taking the envelope's word for where the stream is.
		f.repair = f.state == feedKnown
		return
	}
	if f.state != feedKnown { // no baseline yet; the envelope itself tells where the stream was
		f.found(ev.Prev, time.Now(), p.cfg.Sweep)
	}
	f.hot = hotChecks // the topic has traffic: its next tail checks look for a lost last message
	switch {
	case !f.last.Less(ev.ID):
		// already broadcast by a repair
	case ev.Prev == f.last && !f.repair:
		p.b.Broadcast(ev)
		f.last = ev.ID
	default:
		p.log.Debug().Str("topic", f.topic).Str("delivered", f.last.String()).Str("prev", ev.Prev.String()).Msg("gap: envelope does not follow")
		p.m.gaps.Inc()
		f.repair = true
		p.repairFeed(ctx, f)
	}
}

// catchUp finishes what failed or waited earlier: unsent subscriptions, baselines, repairs. It visits only the
// pending feeds.
func (p *processor) catchUp(ctx context.Context) {
	if len(p.pending) == 0 {
		return
	}
	work := make([]*feed, 0, len(p.pending))
	for f := range p.pending {
		work = append(work, f)
	}
	clear(p.pending) // what is still unfinished after this is tracked again
	for _, f := range work {
		if p.active[f.topic] != f {
			continue
		}
		switch {
		case f.state == feedUnsent:
			p.subscribeLater(ctx, f)
		case f.state == feedConfirmed:
			p.r.baselines = append(p.r.baselines, f)
		case f.repair:
			p.repairFeed(ctx, f)
		}
	}
	p.endRound(ctx)
}

// repairFeed reads the stream after the feed's last id and broadcasts what it finds, in order. A stream that does
// not continue that id (trimmed past it, or emptied by a Redis restart) is announced with a reset first.
func (p *processor) repairFeed(ctx context.Context, f *feed) {
	const page = 1000
	f.hot = hotChecks
	defer p.track(f)
	for {
		from := f.last
		evs, examined, more, err := p.readRaw(ctx, f.topic, from, page, hub.SourceRepair)
		if err != nil {
			p.log.Debug().Err(err).Str("topic", f.topic).Str("after", from.String()).Msg("repair read failed; retrying")
			return // f.repair stays set: catchUp tries again
		}
		if len(evs) > 0 && evs[0].Prev != f.last {
			reason := hub.GapReason(f.last, evs[0].Prev)
			p.log.Debug().Str("topic", f.topic).Str("after", from.String()).Str("reason", reason).Msg("repair: stream does not continue; reset")
			p.b.Broadcast(hub.NewReset(f.topic, reason, evs[0].ID))
		}
		p.log.Debug().Str("topic", f.topic).Str("after", from.String()).Str("to", examined.String()).Int("events", len(evs)).
			Msg("repair")
		for _, ev := range evs {
			p.b.Broadcast(ev)
		}
		// Past invalid entries too, so neither the next envelope nor the tail check meets them again.
		f.last = examined
		if len(evs) > 0 {
			p.m.repairs.Inc()
		}
		if !more {
			f.repair = false
			return
		}
	}
}
