package pubsub

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/syncverse/hub/hub"
)

// HistoryConfig tunes a History. Zero values mean the documented defaults.
type HistoryConfig struct {
	Prefix        string
	MaxEventBytes int // events larger than this are dropped on read (default 64 KiB)
	MaxPageBytes  int // a history page ends once it holds this many bytes (default 1 MiB)
	MaxReads      int // history reads running at once; more wait (default 8)
	MaxSnapshot   int // a snapshot holds at most about this many bytes of state (default 8 MiB)
	Logger        zerolog.Logger
	Registerer    prometheus.Registerer // hub_events_dropped_total is registered here; nil: counted, not exposed
}

// History reads topics' stored events, ends and listings from Redis (XRANGE, XREVRANGE, SCAN). It is not a
// hub.Store by itself (it follows no live feed): the Subscriber embeds it and is one. It is safe for concurrent use.
type History struct {
	rdb  redis.UniversalClient
	keys Keys
	max  int
	log  zerolog.Logger
	m    dropMetrics
	pg   *pager
	// maxSnapshot bounds a snapshot's state; snapsCut counts those it cut short.
	maxSnapshot int
	snapsCut    prometheus.Counter
	// reads, tails and newest coalesce identical concurrent reads: after a hub restart every client of a topic asks
	// for the same range, or the same end of its stream, at once, and one command answers them all (each caller
	// only one sent after it asked: see readGroup).
	reads  readGroup[page]
	tails  readGroup[page]
	newest readGroup[hub.ID]
}

// page is what one history read returns: events, and whether the stream may hold more after them.
type page struct {
	evs  []*hub.Event
	more bool
}

// NewHistory returns a History on rdb.
func NewHistory(rdb redis.UniversalClient, cfg HistoryConfig) *History {
	if cfg.MaxEventBytes <= 0 {
		cfg.MaxEventBytes = DefaultMaxEventBytes
	}
	if cfg.MaxPageBytes <= 0 {
		cfg.MaxPageBytes = DefaultMaxPageBytes
	}
	if cfg.MaxReads <= 0 {
		cfg.MaxReads = DefaultMaxReads
	}
	if cfg.MaxSnapshot <= 0 {
		cfg.MaxSnapshot = DefaultMaxSnapshotBytes
	}
	cut := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "hub_redis_snapshots_truncated_total",
		Help: "Snapshots cut short at limits.max_snapshot_bytes: the answer holds part of the topic's state, marked truncated.",
	})
	if cfg.Registerer != nil {
		cfg.Registerer.MustRegister(cut)
	}
	log := cfg.Logger.Sample(&zerolog.BurstSampler{Burst: 5, Period: time.Second})
	return &History{rdb: rdb, keys: Keys{Prefix: cfg.Prefix}, max: cfg.MaxEventBytes, log: log, m: newDropMetrics(cfg.Registerer),
		pg: newPager(cfg.MaxPageBytes, cfg.MaxEventBytes, cfg.MaxReads, cfg.Registerer), maxSnapshot: cfg.MaxSnapshot, snapsCut: cut}
}

// Keys returns the key names the store uses.
func (s *History) Keys() Keys { return s.keys }

// Read returns up to limit valid events of topic after id, oldest first, and fewer once they reach the page size in
// bytes; more is false when the stream ends there. Invalid entries (written by something other than the script)
// are dropped and counted, and the next event's Prev is carried over them so a reader's chain check still holds.
// The returned events are shared with other readers and must not be modified.
func (s *History) Read(ctx context.Context, topic string, after hub.ID, limit int) ([]*hub.Event, bool, error) {
	key := topic + "\x00" + after.String() + "\x00" + strconv.Itoa(limit)
	p, err := s.reads.do(ctx, key, func() (page, error) {
		// Detached from the first caller's context, so its leaving does not fail the others; the read is bounded
		// by the client's own timeouts.
		evs, _, more, err := s.readRaw(context.WithoutCancel(ctx), topic, after, limit, hub.SourceReplay)
		return page{evs, more}, err
	})
	return p.evs, p.more, err
}

// readRaw is Read, uncoalesced, that also returns the id of the last entry it examined, valid or not, so a reader
// that keeps a position (the Subscriber) can move past invalid entries instead of meeting them again. Drops are
// counted and logged only for the Subscriber's reads (src repair): replays of the same entries by every resuming
// client would count one bad entry many times. A page ends at limit events or at the page size, but never before
// one valid event or the stream's end, so a run of invalid entries cannot stall a reader.
func (s *History) readRaw(ctx context.Context, topic string, after hub.ID, limit int, src hub.Source) ([]*hub.Event, hub.ID, bool, error) {
	if after == maxID {
		return nil, after, false, nil
	}
	out := make([]*hub.Event, 0, min(limit, 64))
	var carry *hub.ID // the prev to give the next valid event, after dropped ones
	used, seen := 0, 0
	for len(out) < limit {
		want := s.pg.count(s.pg.maxBytes-used, avg(used, seen), limit-len(out))
		msgs, err := s.xrange(ctx, s.keys.Stream(topic), "("+after.String(), "+", want, false, src)
		if err != nil {
			return nil, after, false, fmt.Errorf("read %s after %s: %w", topic, after, err)
		}
		for _, m := range msgs {
			used += entryBytes(m)
			seen++
			after, carry = s.take(topic, m, src, after, carry, &out)
		}
		if len(msgs) < want {
			return out, after, false, nil
		}
		if len(out) > 0 && len(out) < limit && s.pg.full(used) {
			s.pg.cut.Inc()
			return out, after, true, nil
		}
		if len(out) == 0 {
			used, seen = 0, 0 // only invalid entries so far: they are not kept, so they take no room
		}
	}
	return out, after, true, nil
}

// take appends entry m to out if it is valid; otherwise it drops it and carries the chain over it. It returns the
// new position and carry.
func (s *History) take(topic string, m redis.XMessage, src hub.Source, after hub.ID, carry *hub.ID, out *[]*hub.Event) (hub.ID, *hub.ID) {
	ev, reason := fromEntry(topic, m, s.max, src)
	if reason == "" {
		if carry != nil {
			ev.Prev, carry = *carry, nil
		}
		*out = append(*out, ev)
		return ev.ID, carry
	}
	if src == hub.SourceRepair {
		s.drop(topic, m.ID, reason)
	}
	if carry == nil {
		// The dropped entry's own prev when it has one (it may reveal a gap before it), else the entry read just
		// before it: the chain continues across the dropped entry either way.
		p := after
		if ev != nil && reason != dropBadEntry {
			p = ev.Prev
		}
		carry = &p
	}
	if id, err := hub.ParseID(m.ID); err == nil {
		after = id
	}
	return after, carry
}

// Tail returns the oldest page of the last n valid events of topic, oldest first; more says that the rest follows
// the page's last event (read on with Read). The returned events are shared with other readers and must not be
// modified.
func (s *History) Tail(ctx context.Context, topic string, n int) ([]*hub.Event, bool, error) {
	p, err := s.tails.do(ctx, topic+"\x00"+strconv.Itoa(n), func() (page, error) {
		return s.tail(context.WithoutCancel(ctx), topic, n) // detached as in Read
	})
	return p.evs, p.more, err
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
	s.m.dropped.WithLabelValues(reason).Inc()
	s.log.Warn().Str("topic", topic).Str("id", id).Str("reason", reason).Msg("dropped event: " + describeDrop(reason))
}
