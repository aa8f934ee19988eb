package pubsub

import (
	"context"
	"slices"
	"testing"
)

// Topics lists what the query selects and nothing else: prefixes (one covering another), names (one that has no
// stream, one whose key holds a hash), both, or nothing.
func TestStoreTopicsBySelection(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		b.addStreams(t, "1-1", "a.1", "a.2", "ab.1", "b.1", "c.x")
		if b.real { // miniredis answers XREVRANGE on a hash with a malformed reply rather than WRONGTYPE
			b.rdb.HSet(ctx, b.keys.Stream("h"), "x", "y")
		}
		cases := []struct {
			name string
			q    TopicQuery
			want []string
		}{
			{"one prefix", TopicQuery{Prefixes: []string{"a."}}, []string{"a.1", "a.2"}},
			{"a prefix covering another", TopicQuery{Prefixes: []string{"a.", "a"}}, []string{"a.1", "a.2", "ab.1"}},
			{"two prefixes", TopicQuery{Prefixes: []string{"b.", "c."}}, []string{"b.1", "c.x"}},
			{"names", TopicQuery{Names: []string{"b.1", "nope", "h", "b.1"}}, []string{"b.1"}},
			{"names and a prefix", TopicQuery{Names: []string{"c.x", "a.1"}, Prefixes: []string{"a."}}, []string{"a.1", "a.2", "c.x"}},
			{"nothing", TopicQuery{}, nil},
			{"all", TopicQuery{All: true, Prefixes: []string{"zzz"}}, []string{"a.1", "a.2", "ab.1", "b.1", "c.x"}},
		}
		for _, c := range cases {
			c.q.Limit = 10
			got, err := b.store().Topics(ctx, c.q)
			var names []string
			for _, tp := range got.Topics {
				names = append(names, tp.Name)
			}
			slices.Sort(names)
			if err != nil || !slices.Equal(names, c.want) || got.Truncated != "" {
				t.Errorf("%s: Topics(%+v) = %v, truncated %q, %v; want %v", c.name, c.q, names, got.Truncated, err, c.want)
			}
		}
		got, err := b.store().Topics(ctx, TopicQuery{Names: []string{"a.1", "b.1", "c.x"}, Limit: 2})
		if err != nil || len(got.Topics) != 2 || got.Truncated != "limit" {
			t.Errorf("Topics of 3 names, limit 2 = %+v, %v; want 2, truncated by the limit", got, err)
		}
	})
}

// One call walks at most ScanKeys keys: past them the list says so instead of walking on.
func TestStoreTopicsScanBudget(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		if !b.real {
			t.Skip("miniredis answers SCAN in one call whatever COUNT says")
		}
		b.addStreams(t, "1-1", numbered("other.%04d", 5000)...)
		got, err := b.store().Topics(ctx, TopicQuery{Prefixes: []string{"mine."}, Limit: 10, ScanKeys: 2000})
		if err != nil || len(got.Topics) != 0 || got.Truncated != "scan" {
			t.Errorf("Topics(mine.*) over 5000 other streams with a 2000-key budget = %+v, %v; want none, truncated by the scan", got, err)
		}
		got, err = b.store().Topics(ctx, TopicQuery{Prefixes: []string{"mine."}, Limit: 10, ScanKeys: 100000})
		if err != nil || len(got.Topics) != 0 || got.Truncated != "" {
			t.Errorf("Topics(mine.*) with room to walk everything = %+v, %v; want none, not truncated", got, err)
		}
	})
}
