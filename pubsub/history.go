package pubsub

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/syncverse/hub/hub"
)

// HistoryConfig tunes a History. Zero values mean the documented defaults.
type HistoryConfig struct {
	Prefix        string
	MaxEventBytes int // events larger than this are dropped on read (default 64 KiB)
	Logger        zerolog.Logger
	HubMetrics    *hub.Metrics // counts dropped events; nil means unregistered
}

// History reads topics' stored events, ends and listings from Redis (XRANGE, XREVRANGE, SCAN). It is not a
// hub.Store by itself (it follows no live feed): the Subscriber embeds it and is one. It is safe for concurrent use.
type History struct {
	rdb  redis.UniversalClient
	keys Keys
	max  int
	log  zerolog.Logger
	hm   *hub.Metrics
	// reads, tails and newest coalesce identical concurrent reads: after a hub restart every client of a topic asks
	// for the same range, or the same end of its stream, at once, and one command answers them all (each caller
	// only one sent after it asked: see readGroup).
	reads  readGroup[[]*hub.Event]
	tails  readGroup[[]*hub.Event]
	newest readGroup[hub.ID]
}

// NewHistory returns a History on rdb.
func NewHistory(rdb redis.UniversalClient, cfg HistoryConfig) *History {
	if cfg.MaxEventBytes <= 0 {
		cfg.MaxEventBytes = DefaultMaxEventBytes
	}
	if cfg.HubMetrics == nil {
		cfg.HubMetrics = hub.NewMetrics(nil)
	}
	log := cfg.Logger.Sample(&zerolog.BurstSampler{Burst: 5, Period: time.Second})
	return &History{rdb: rdb, keys: Keys{Prefix: cfg.Prefix}, max: cfg.MaxEventBytes, log: log, hm: cfg.HubMetrics}
}

// Keys returns the key names the store uses.
func (s *History) Keys() Keys { return s.keys }

// Read returns up to limit valid events of topic after id, oldest first. Invalid entries (written by something
// other than the script) are dropped and counted, and the next event's Prev is carried over them so a reader's
// chain check still holds. Fewer than limit events means the stream ends there.
// The returned events are shared with other readers and must not be modified.
func (s *History) Read(ctx context.Context, topic string, after hub.ID, limit int) ([]*hub.Event, error) {
	key := topic + "\x00" + after.String() + "\x00" + strconv.Itoa(limit)
	return s.reads.do(ctx, key, func() ([]*hub.Event, error) {
		// Detached from the first caller's context, so its leaving does not fail the others; the read is bounded
		// by the client's own timeouts.
		return s.read(context.WithoutCancel(ctx), topic, after, limit, hub.SourceReplay)
	})
}

func (s *History) read(ctx context.Context, topic string, after hub.ID, limit int, src hub.Source) ([]*hub.Event, error) {
	evs, _, err := s.readRaw(ctx, topic, after, limit, src)
	return evs, err
}

// readRaw is read that also returns the id of the last entry it examined, valid or not, so a reader that keeps a
// position (the Subscriber) can move past invalid entries instead of meeting them again. Drops are counted and
// logged only for the Subscriber's reads (src repair): replays of the same entries by every resuming client would
// count one bad entry many times.
func (s *History) readRaw(ctx context.Context, topic string, after hub.ID, limit int, src hub.Source) ([]*hub.Event, hub.ID, error) {
	out := make([]*hub.Event, 0, min(limit, 1024))
	var carry *hub.ID // the prev to give the next valid event, after dropped ones
	for len(out) < limit {
		want := limit - len(out)
		msgs, err := s.rdb.XRangeN(ctx, s.keys.Stream(topic), "("+after.String(), "+", int64(want)).Result()
		if err != nil {
			return nil, after, fmt.Errorf("read %s after %s: %w", topic, after, err)
		}
		for _, m := range msgs {
			ev, reason := fromEntry(topic, m, s.max, src)
			if reason == "" {
				if carry != nil {
					ev.Prev, carry = *carry, nil
				}
				out = append(out, ev)
				after = ev.ID
				continue
			}
			if src == hub.SourceRepair {
				s.drop(topic, m.ID, reason)
			}
			if carry == nil {
				// The dropped entry's own prev when it has one (it may reveal a gap before it), else the entry read
				// just before it: the chain continues across the dropped entry either way.
				p := after
				if ev != nil && reason != dropBadEntry {
					p = ev.Prev
				}
				carry = &p
			}
			if id, err := hub.ParseID(m.ID); err == nil {
				after = id
			}
		}
		if len(msgs) < want {
			break
		}
	}
	return out, after, nil
}

// Tail returns the last n valid events of topic, oldest first.
// The returned events are shared with other readers and must not be modified.
func (s *History) Tail(ctx context.Context, topic string, n int) ([]*hub.Event, error) {
	return s.tails.do(ctx, topic+"\x00"+strconv.Itoa(n), func() ([]*hub.Event, error) {
		return s.tail(context.WithoutCancel(ctx), topic, n) // detached as in Read
	})
}

func (s *History) tail(ctx context.Context, topic string, n int) ([]*hub.Event, error) {
	msgs, err := s.rdb.XRevRangeN(ctx, s.keys.Stream(topic), "+", "-", int64(n)).Result()
	if err != nil {
		return nil, fmt.Errorf("read the tail of %s: %w", topic, err)
	}
	out := make([]*hub.Event, 0, len(msgs))
	for i := len(msgs) - 1; i >= 0; i-- {
		ev, reason := fromEntry(topic, msgs[i], s.max, hub.SourceReplay)
		if reason != "" {
			continue // counted by the Subscriber, which reads every entry once
		}
		out = append(out, ev)
	}
	return out, nil
}

// Newest returns the id of the topic's newest entry, zero when the stream is empty or missing.
func (s *History) Newest(ctx context.Context, topic string) (hub.ID, error) {
	return s.newest.do(ctx, topic, func() (hub.ID, error) {
		return s.newestOf(context.WithoutCancel(ctx), topic) // detached as in Read
	})
}

// newestOf is Newest's one command, for a caller of its own (the Subscriber) that must stop with its ctx.
func (s *History) newestOf(ctx context.Context, topic string) (hub.ID, error) {
	msgs, err := s.rdb.XRevRangeN(ctx, s.keys.Stream(topic), "+", "-", 1).Result()
	if err != nil || len(msgs) == 0 {
		return hub.ID{}, err
	}
	return hub.ParseID(msgs[0].ID)
}

func (s *History) drop(topic, id, reason string) {
	s.hm.Drop(reason)
	s.log.Warn().Str("topic", topic).Str("id", id).Str("reason", reason).Msg("dropped event: " + describeDrop(reason))
}
