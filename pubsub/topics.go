package pubsub

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/hub"
)

// TopicInfo describes one topic that has a stream.
type TopicInfo struct {
	Name         string    `json:"name"`
	Length       int64     `json:"length"`
	LastID       string    `json:"last_id"`
	LastActivity time.Time `json:"last_activity"`
}

// TopicQuery says which topics Topics lists: every one (All), those starting with one of Prefixes, and those
// named in Names. A query that selects nothing costs nothing.
type TopicQuery struct {
	All      bool
	Prefixes []string
	Names    []string
	// Limit is the most topics listed.
	Limit int
	// ScanKeys is the most keys SCAN may walk to find topics for All or Prefixes (default 100,000), so one call's
	// cost is bounded whatever the keyspace holds; past it the list is truncated.
	ScanKeys int
}

// TopicList is what Topics found, most recently active first.
type TopicList struct {
	Topics []TopicInfo
	// Truncated says more topics may match: the limit was reached ("limit") or the scan budget ran out ("scan").
	Truncated string
}

// scanCount is the COUNT of each SCAN call: the keys Redis walks per round trip.
const scanCount = 1000

// Topics lists the topics q selects that have a stream. It asks Redis about a topic only once the query has
// selected it, so the commands per call are at most ScanKeys/1000 SCANs (one pass over the keyspace, on each
// master of a cluster, with a MATCH pattern when one prefix is asked for) and two per topic listed.
func (s *History) Topics(ctx context.Context, q TopicQuery) (TopicList, error) {
	var out TopicList
	q.Prefixes = coveringPrefixes(q)
	seen := map[string]bool{}
	var named []string
	for _, n := range q.Names {
		if !seen[n] && !matchesPrefix(q, n) && hub.ValidateTopic(n) == nil {
			seen[n] = true
			named = append(named, n)
		}
	}
	if len(named) > q.Limit {
		named, out.Truncated = named[:q.Limit], "limit"
	}
	found, err := s.describe(ctx, named)
	if err != nil {
		return out, err
	}
	found = slices.DeleteFunc(found, func(t TopicInfo) bool { return t.LastID == "" && t.Length == 0 })
	room := q.Limit - len(found)
	if room <= 0 && (q.All || len(q.Prefixes) > 0) {
		out.Truncated = "limit" // without looking: more may match, and finding out would cost a scan
	}
	if room > 0 && (q.All || len(q.Prefixes) > 0) {
		names, truncated, err := s.scanTopics(ctx, q, seen, room)
		if err != nil {
			return out, err
		}
		if truncated != "" {
			out.Truncated = truncated
		}
		more, err := s.describe(ctx, names)
		if err != nil {
			return out, err
		}
		found = append(found, more...)
	}
	slices.SortFunc(found, func(a, b TopicInfo) int {
		if c := b.LastActivity.Compare(a.LastActivity); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	out.Topics = found
	return out, nil
}

// coveringPrefixes drops the prefixes another one covers ("a.b" under "a."); with All none is needed.
func coveringPrefixes(q TopicQuery) []string {
	if q.All {
		return nil
	}
	ps := slices.Clone(q.Prefixes)
	slices.Sort(ps)
	return slices.CompactFunc(ps, func(a, b string) bool { return strings.HasPrefix(b, a) })
}

func matchesPrefix(q TopicQuery, topic string) bool {
	return q.All || slices.ContainsFunc(q.Prefixes, func(p string) bool { return strings.HasPrefix(topic, p) })
}

// errEnough stops a scan that has found what it needs or spent its budget.
var errEnough = errors.New("enough topics")

// scanTopics walks the keyspace for streams of topics q's prefixes (or All) select and seen does not hold, until it
// has room+1 of them or has walked ScanKeys keys. It returns at most room names.
func (s *History) scanTopics(ctx context.Context, q TopicQuery, seen map[string]bool, room int) ([]string, string, error) {
	match := s.keys.StreamPattern()
	if len(q.Prefixes) == 1 { // topic characters are never glob characters: the prefix goes in as it is
		match = s.keys.prefix() + ":{" + q.Prefixes[0] + "*}:events"
	}
	budget := int64(q.ScanKeys)
	if budget <= 0 {
		budget = 100 * scanCount
	}
	var (
		mu        sync.Mutex // masters of a cluster are scanned concurrently
		names     []string
		spent     atomic.Int64
		truncated string
	)
	scan := func(ctx context.Context, c *redis.Client) error {
		var cursor uint64
		for {
			if spent.Add(scanCount) > budget {
				mu.Lock()
				truncated = "scan"
				mu.Unlock()
				return errEnough
			}
			keys, next, err := c.ScanType(ctx, cursor, match, scanCount, "stream").Result()
			if err != nil {
				return err
			}
			mu.Lock()
			for _, k := range keys {
				if t, ok := s.keys.TopicOf(k, "events"); ok && !seen[t] && matchesPrefix(q, t) && hub.ValidateTopic(t) == nil {
					seen[t] = true
					names = append(names, t)
				}
			}
			enough := len(names) > room
			mu.Unlock()
			if enough {
				return errEnough
			}
			if cursor = next; cursor == 0 {
				return nil
			}
		}
	}
	var err error
	switch c := s.rdb.(type) {
	case *redis.Client:
		err = scan(ctx, c)
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, scan)
	default:
		return nil, "", fmt.Errorf("list topics: unsupported client %T", s.rdb)
	}
	if err != nil && !errors.Is(err, errEnough) {
		return nil, "", fmt.Errorf("list topics: %w", err)
	}
	if len(names) > room {
		names, truncated = names[:room], "limit"
	}
	return names, truncated, nil
}

func (s *History) describe(ctx context.Context, names []string) ([]TopicInfo, error) {
	out := make([]TopicInfo, 0, len(names))
	for chunk := range slices.Chunk(names, 200) {
		pipe := s.rdb.Pipeline()
		lens := make([]*redis.IntCmd, len(chunk))
		lasts := make([]*redis.XMessageSliceCmd, len(chunk))
		for i, t := range chunk {
			lens[i] = pipe.XLen(ctx, s.keys.Stream(t))
			lasts[i] = pipe.XRevRangeN(ctx, s.keys.Stream(t), "+", "-", 1)
		}
		var reply redis.Error // a key of another type under a named topic's stream key: that topic has no stream
		if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) && !errors.As(err, &reply) {
			return nil, fmt.Errorf("describe topics: %w", err)
		}
		for i, t := range chunk {
			if lens[i].Err() != nil || lasts[i].Err() != nil {
				continue
			}
			info := TopicInfo{Name: t, Length: lens[i].Val()}
			if m := lasts[i].Val(); len(m) == 1 {
				info.LastID = m[0].ID
				if id, err := hub.ParseID(m[0].ID); err == nil {
					info.LastActivity = time.UnixMilli(int64(id.Ms)).UTC()
				}
			}
			out = append(out, info)
		}
	}
	return out, nil
}
