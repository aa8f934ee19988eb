package pubsub

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/keyslot"
)

// The tail check looks for an event that is in a topic's stream but was never delivered, when nothing later would
// reveal it: the live message of a topic's last event lost while its entry was stored. Every other loss shows by
// itself: a later envelope's prev does not match (repaired at once), a reconnect confirms each subscription again
// (repaired), a full queue is counted per topic (repaired), an invalid envelope asks for a repair. What is left is a
// last message lost with nothing after it, and on Redis that happens with traffic: a cluster bus link that drops
// what PUBLISH broadcast, an envelope lost around a subscription, a publisher on the wrong variant of the script
// (PUBLISH to a hub that SSUBSCRIBEs). So:
//
//   - A topic with traffic (a live envelope, a repair, a new subscription) is checked at each of the next
//     hotChecks tail checks: a last message lost up to one whole tail_check after the last sign of traffic is
//     found within two. A topic that keeps busy costs one check per tail_check, as every topic did before, and
//     its own envelopes' prev check it in between anyway.
//   - A quiet topic, with no envelope and no known gap, is checked only by the sweep, once per Sweep (default 12 ×
//     tail_check, 1 min), at a random phase so sweeps spread over the ticks. That bounds how late a lost message on a
//     quiet topic comes (Sweep + tail_check), while 10,000 quiet topics cost a few commands a minute instead of
//     2,000 XREVRANGEs a second.
//
// A check is XREAD COUNT 1 STREAMS after the last id delivered: many streams per command (one command for the
// topics of one slot: a Cluster refuses keys of several slots in one command), and an empty answer when nothing is
// missing, where XREVRANGE sent every topic's last entry back each time.

// hotChecks is how many tail checks follow a topic's last sign of traffic.
const hotChecks = 2

// DefaultSweepChecks is how many tail checks make SubscriberConfig.Sweep's default.
const DefaultSweepChecks = 12

// maxStreamsPerCheck bounds one XREAD, so a sweep of thousands of topics is several short commands.
const maxStreamsPerCheck = 256

// tailCheck checks the feeds that are due: those with recent traffic, and the sweep's.
func (p *processor) tailCheck(ctx context.Context, now time.Time) {
	var due []*feed
	for _, f := range p.active {
		if f.state != feedKnown || f.repair {
			continue // not yet positioned, or being repaired anyway
		}
		if f.hot > 0 || !now.Before(f.sweepAt) {
			due = append(due, f)
		}
	}
	if len(due) == 0 {
		return
	}
	for _, f := range due {
		if f.hot > 0 {
			f.hot--
		}
		if !now.Before(f.sweepAt) {
			// On to the next turn of the topic's own phase, not now + Sweep: topics followed together (a join storm,
			// a reconnect) are checked together while hot, and would otherwise all be swept in the same tick.
			f.sweepAt = f.sweepAt.Add(p.cfg.Sweep * (now.Sub(f.sweepAt)/p.cfg.Sweep + 1))
		}
	}
	p.checkEnds(ctx, due)
}

// checkEnds asks Redis, per slot, whether each feed's stream holds an entry after the last id delivered; a feed
// whose does is repaired. A feed whose check failed is checked again at the next tick.
func (p *processor) checkEnds(ctx context.Context, due []*feed) {
	_, cluster := p.rdb.(*redis.ClusterClient)
	groups := map[int][]*feed{}
	for _, f := range due {
		slot := 0
		if cluster {
			slot = keyslot.Of(p.keys.Stream(f.topic))
		}
		groups[slot] = append(groups[slot], f)
	}
	pipe := p.rdb.Pipeline()
	type check struct {
		cmd   *redis.XStreamSliceCmd
		feeds []*feed
	}
	var checks []check
	for _, g := range groups {
		for i := 0; i < len(g); i += maxStreamsPerCheck {
			part := g[i:min(i+maxStreamsPerCheck, len(g))]
			args := make([]string, 2*len(part))
			for k, f := range part {
				args[k], args[len(part)+k] = p.keys.Stream(f.topic), f.last.String()
			}
			checks = append(checks, check{pipe.XRead(ctx, &redis.XReadArgs{Streams: args, Count: 1, Block: -1}), part})
		}
	}
	_, _ = pipe.Exec(ctx) // each command's own error is read below
	for _, c := range checks {
		streams, err := c.cmd.Result()
		if err != nil && err != redis.Nil {
			for _, f := range c.feeds {
				f.hot = max(f.hot, 1)
			}
			continue
		}
		p.gapsIn(c.feeds, streams)
	}
}

// gapsIn marks for repair each of feeds that streams (an XREAD answer) shows an entry for.
func (p *processor) gapsIn(feeds []*feed, streams []redis.XStream) {
	if len(streams) == 0 {
		return
	}
	byKey := make(map[string]*feed, len(feeds))
	for _, f := range feeds {
		byKey[p.keys.Stream(f.topic)] = f
	}
	for _, st := range streams {
		f := byKey[st.Stream]
		if f == nil || len(st.Messages) == 0 {
			continue
		}
		if id, err := hub.ParseID(st.Messages[0].ID); err == nil && f.last.Less(id) {
			p.log.Debug().Str("topic", f.topic).Str("delivered", f.last.String()).Str("next", id.String()).Msg("tail check: gap")
			p.m.gaps.Inc()
			f.repair = true
			p.track(f)
		}
	}
}
