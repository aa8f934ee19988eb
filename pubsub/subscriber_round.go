package pubsub

import (
	"context"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/hub"
)

// maxChannelsPerCommand bounds one SUBSCRIBE or UNSUBSCRIBE, so a join storm of thousands of topics does not make
// one command that holds Redis (and every publisher waiting on it) for long.
const maxChannelsPerCommand = 512

// round gathers the pub/sub changes and baseline reads of one pass over the queue. Joins and leaves come one item
// each; sent as they came, a churn of hundreds of topics a second is hundreds of SUBSCRIBE and UNSUBSCRIBE commands
// (each a write on the pub/sub connection) and as many baseline reads, each a round trip the processor waits for
// while live messages queue. Gathered, a pass costs one SUBSCRIBE, one UNSUBSCRIBE and one pipeline of reads, and
// the batches grow by themselves with the load: whatever arrives while the processor waits for one round is the
// next.
//
// Only the order of the commands for one channel matters (a leave and a join of the same topic must reach Redis in
// that order); a pass that touches a channel already waiting in the other list sends what waits first.
type round struct {
	sub       []string // channels to subscribe, for subFeeds
	subFeeds  []*feed
	unsub     []string
	inSub     map[string]bool
	inUnsub   map[string]bool
	baselines []*feed // confirmed feeds whose stream end is to be read
}

// subscribeLater asks for f's channel in this round's SUBSCRIBE.
func (p *processor) subscribeLater(ctx context.Context, f *feed) {
	ch := p.keys.Channel(f.topic)
	if p.r.inUnsub[ch] || p.r.inSub[ch] {
		p.flush(ctx)
	}
	if p.r.inSub == nil {
		p.r.inSub, p.r.inUnsub = make(map[string]bool), make(map[string]bool)
	}
	p.r.sub, p.r.subFeeds = append(p.r.sub, ch), append(p.r.subFeeds, f)
	p.r.inSub[ch] = true
}

// unsubscribeLater puts topic's channel in this round's UNSUBSCRIBE.
func (p *processor) unsubscribeLater(ctx context.Context, topic string) {
	ch := p.keys.Channel(topic)
	if p.r.inSub[ch] || p.r.inUnsub[ch] {
		p.flush(ctx)
	}
	if p.r.inSub == nil {
		p.r.inSub, p.r.inUnsub = make(map[string]bool), make(map[string]bool)
	}
	p.r.unsub = append(p.r.unsub, ch)
	p.r.inUnsub[ch] = true
}

// flush sends the round's UNSUBSCRIBE and SUBSCRIBE commands. A feed whose SUBSCRIBE could not be written stays
// feedUnsent, and catchUp sends it again.
func (p *processor) flush(ctx context.Context) {
	for chunk := range slices.Chunk(p.r.unsub, maxChannelsPerCommand) {
		_ = p.unsubscribe(ctx, chunk...) // a leave that fails is forgotten with the connection it was on
	}
	for i := 0; i < len(p.r.sub); i += maxChannelsPerCommand {
		j := min(i+maxChannelsPerCommand, len(p.r.sub))
		err := p.subscribe(ctx, p.r.sub[i:j]...)
		for _, f := range p.r.subFeeds[i:j] {
			if err == nil && f.state == feedUnsent {
				f.state = feedSent
			}
			p.track(f)
		}
	}
	p.r.sub, p.r.subFeeds, p.r.unsub = p.r.sub[:0], p.r.subFeeds[:0], p.r.unsub[:0]
	clear(p.r.inSub)
	clear(p.r.inUnsub)
}

// endRound sends what the pass gathered: the pub/sub changes, then one pipeline reading the stream end of every
// feed confirmed in it. Everything published after that end arrives live (the subscription was confirmed first), so
// each of those feeds is ready.
func (p *processor) endRound(ctx context.Context) {
	p.flush(ctx)
	if len(p.r.baselines) == 0 {
		return
	}
	feeds := p.r.baselines
	p.r.baselines = nil
	pipe := p.rdb.Pipeline()
	cmds := make([]*redis.XMessageSliceCmd, 0, len(feeds))
	for _, f := range feeds {
		cmds = append(cmds, pipe.XRevRangeN(ctx, p.keys.Stream(f.topic), "+", "-", 1))
	}
	_, _ = pipe.Exec(ctx) // each command's own error is read below
	now := time.Now()
	for i, f := range feeds {
		if p.active[f.topic] != f || f.state != feedConfirmed {
			continue // left, or found by a live envelope in the same pass, or listed twice
		}
		newest, err := newestIn(cmds[i])
		if err != nil {
			p.track(f) // catchUp tries again
			continue
		}
		f.found(newest, now, p.cfg.Sweep)
	}
}

// newestIn is the id an XREVRANGE … COUNT 1 answered: zero for an empty or missing stream.
func newestIn(c *redis.XMessageSliceCmd) (hub.ID, error) {
	msgs, err := c.Result()
	if err != nil || len(msgs) == 0 {
		return hub.ID{}, err
	}
	return hub.ParseID(msgs[0].ID)
}
