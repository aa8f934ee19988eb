package pubsub

import (
	"context"
	"math"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/semaphore"

	"github.com/syncverse/hub/hub"
)

// Defaults of the read bounds (limits.max_page_bytes, limits.max_store_reads).
const (
	DefaultMaxPageBytes = 1 << 20
	DefaultMaxReads     = 8
	// DefaultMaxSnapshotBytes bounds a snapshot (limits.max_snapshot_bytes).
	DefaultMaxSnapshotBytes = 8 << 20
)

// pager bounds what history reads hold: a page ends once its entries reach maxBytes (however many events it was
// asked for), each command asks for no more entries than fit in what is left of that, and at most slots commands
// run at once. Without it, one read of 1,000 events of 60 KB held 60 MB several times over, for every client.
type pager struct {
	maxBytes int
	maxEvent int
	slots    *semaphore.Weighted
	waited   prometheus.Counter
	cut      prometheus.Counter
}

func newPager(maxBytes, maxEvent, reads int, reg prometheus.Registerer) *pager {
	f := promauto.With(reg)
	p := &pager{
		maxBytes: maxBytes, maxEvent: maxEvent, slots: semaphore.NewWeighted(int64(reads)),
		waited: f.NewCounter(prometheus.CounterOpts{
			Name: "hub_redis_reads_waited_total",
			Help: "History reads that waited for a free slot: limits.max_store_reads were running already.",
		}),
		cut: f.NewCounter(prometheus.CounterOpts{
			Name: "hub_redis_pages_cut_total",
			Help: "History pages ended by limits.max_page_bytes before they held the events asked for; the reader continues from there.",
		}),
	}
	return p
}

// count says how many entries the next command may ask for, at most want, so that they stay within room bytes at
// each bytes an entry; each is 0 when no entry was seen yet, and then an entry may be as large as an event may be.
func (p *pager) count(room, each, want int) int {
	if each <= 0 {
		each = p.maxEvent
	}
	return max(1, min(want, room/each))
}

// avg is the mean size of n entries of bytes in all, 0 for none.
func avg(bytes, n int) int {
	if n == 0 {
		return 0
	}
	return max(bytes/n, 1)
}

// full reports whether a page holding used bytes must end.
func (p *pager) full(used int) bool { return used >= p.maxBytes }

// slot runs op in a read slot; see xrange.
func (s *History) slot(ctx context.Context, op func() error) error {
	if !s.pg.slots.TryAcquire(1) {
		s.pg.waited.Inc()
		if err := s.pg.slots.Acquire(ctx, 1); err != nil {
			return err
		}
	}
	defer s.pg.slots.Release(1)
	return op()
}

// xrange runs one XRANGE (XREVRANGE when rev) in a read slot. Repairs (the Subscriber's own reads, one at a time)
// take none: the live feed never waits behind clients' replays.
func (s *History) xrange(ctx context.Context, key, start, end string, count int, rev bool, src hub.Source) ([]redis.XMessage, error) {
	read := func() (msgs []redis.XMessage, err error) {
		if rev {
			return s.rdb.XRevRangeN(ctx, key, start, end, int64(count)).Result()
		}
		return s.rdb.XRangeN(ctx, key, start, end, int64(count)).Result()
	}
	if src == hub.SourceRepair {
		return read()
	}
	var msgs []redis.XMessage
	err := s.slot(ctx, func() (err error) { msgs, err = read(); return err })
	return msgs, err
}

// entryBytes is about what an entry costs once read: its id and its fields.
func entryBytes(m redis.XMessage) int {
	n := len(m.ID)
	for k, v := range m.Values {
		s, _ := v.(string)
		n += len(k) + len(s)
	}
	return n
}

// maxID is the largest stream id: nothing can follow it, and Redis refuses an exclusive range that starts there.
var maxID = hub.ID{Ms: math.MaxUint64, Seq: math.MaxUint64}

// before returns the id just before id (id must not be 0-0), so that "(" + before(id) starts a range at id.
func before(id hub.ID) hub.ID {
	if id.Seq > 0 {
		return hub.ID{Ms: id.Ms, Seq: id.Seq - 1}
	}
	return hub.ID{Ms: id.Ms - 1, Seq: math.MaxUint64}
}
