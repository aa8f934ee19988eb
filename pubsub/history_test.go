package pubsub

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/syncverse/hub/hub"
)

func idsOf(evs []*hub.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.IDText
	}
	return out
}

// TestStoreReadDropsInvalidEntriesAndCarriesPrev: entries written by something other than the script are dropped
// (counted once, by the Subscriber's read); the next valid event's Prev skips over them, so a reader's chain check holds; page limits included.
func TestStoreReadDropsInvalidEntriesAndCarriesPrev(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		reg := metered()
		st := NewHistory(b.rdb, HistoryConfig{Prefix: b.prefix, MaxEventBytes: 64, Registerer: reg})
		a := b.publish(t, "t", "", `{"n":"a"}`)
		bID := b.publish(t, "t", "", `{"n":"b"}`)
		b.xadd(t, "t", "p", bID, "t", "BAD", "d", `{}`)
		b.xadd(t, "t", "p", "1-0", "t", "progress", "d", `{"n":`)
		b.xadd(t, "t", "p", "1-0", "t", "progress", "d", `"`+strings.Repeat("x", 80)+`"`)
		c := b.publish(t, "t", "", `{"n":"c"}`)
		d := b.publish(t, "t", "", `{"n":"d"}`)

		aID, _ := hub.ParseID(a)
		evs, _, err := st.Read(ctx, "t", aID, 100)
		if err != nil || !slices.Equal(idsOf(evs), []string{bID, c, d}) {
			t.Fatalf("Read(after %s, 100) = %q, %v; want %q", a, idsOf(evs), err, []string{bID, c, d})
		}
		if evs[0].Prev.String() != a || evs[1].Prev.String() != bID || evs[2].Prev.String() != c {
			t.Errorf("Prevs = %v %v %v, want %s %s %s (carried over the dropped entries)", evs[0].Prev, evs[1].Prev, evs[2].Prev, a, bID, c)
		}
		if evs[1].Source != hub.SourceReplay || string(evs[1].Data) != `{"n":"c"}` || evs[1].Type != "progress" {
			t.Errorf("event %s = %+v, want type progress, data {\"n\":\"c\"}, source replay", c, evs[1])
		}
		// A replay skips them quietly; the Subscriber's read (every entry once) counts them.
		for _, r := range []string{dropBadType, dropInvalidJSON, dropTooLarge} {
			if v := metricOf(t, reg, "hub_events_dropped_total", "reason="+r); v != 0 {
				t.Errorf("hub_events_dropped_total{reason=%s} = %v after a replay Read, want 0", r, v)
			}
		}
		if _, examined, _, err := st.readRaw(ctx, "t", aID, 100, hub.SourceRepair); err != nil || examined.String() != d {
			t.Errorf("readRaw(after %s) examined up to %s, %v; want %s", a, examined, err, d)
		}
		for _, r := range []string{dropBadType, dropInvalidJSON, dropTooLarge} {
			if v := metricOf(t, reg, "hub_events_dropped_total", "reason="+r); v != 1 {
				t.Errorf("hub_events_dropped_total{reason=%s} = %v after the Subscriber's read, want 1", r, v)
			}
		}

		// Pages of every size give the same chain: the carry survives a page that ends on dropped entries.
		for limit := 1; limit <= 4; limit++ {
			var got []*hub.Event
			after := aID
			for range 10 {
				page, _, err := st.Read(ctx, "t", after, limit)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, page...)
				if len(page) < limit {
					break
				}
				after = page[len(page)-1].ID
			}
			prevs := make([]string, len(got))
			for i, ev := range got {
				prevs[i] = ev.Prev.String()
			}
			if !slices.Equal(idsOf(got), []string{bID, c, d}) || !slices.Equal(prevs, []string{a, bID, c}) {
				t.Errorf("Read in pages of %d: ids %q prevs %q, want %q and %q", limit, idsOf(got), prevs, []string{bID, c, d}, []string{a, bID, c})
			}
		}

		tail, _, err := st.Tail(ctx, "t", 3) // the last 3 valid events: invalid entries are skipped, not counted
		if err != nil || !slices.Equal(idsOf(tail), []string{bID, c, d}) {
			t.Errorf("Tail(3) = %q, %v; want %q (invalid ones dropped)", idsOf(tail), err, []string{bID, c, d})
		}
		if newest, err := st.Newest(ctx, "t"); err != nil || newest.String() != d {
			t.Errorf("Newest = %v, %v; want %s", newest, err, d)
		}
		if newest, err := st.Newest(ctx, "empty"); err != nil || !newest.IsZero() {
			t.Errorf("Newest(empty) = %v, %v; want 0-0, nil", newest, err)
		}
		if evs, _, err := st.Read(ctx, "empty", hub.ID{}, 10); err != nil || len(evs) != 0 {
			t.Errorf("Read(empty) = %q, %v; want nothing", idsOf(evs), err)
		}
	})
}

// TestStoreReadCarriesPrevOverAnEntryWithoutPrev: an entry without a usable p field must not make the next event
// look like the start of a new stream.
func TestStoreReadCarriesPrevOverAnEntryWithoutPrev(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		st := b.store()
		a := b.publish(t, "t", "", `{"n":"a"}`)
		b.xadd(t, "t", "t", "progress", "d", `{"n":"no p"}`)
		c := b.publish(t, "t", "", `{"n":"c"}`)
		aID, _ := hub.ParseID(a)
		evs, _, err := st.Read(ctx, "t", aID, 10)
		if err != nil || len(evs) != 1 || evs[0].IDText != c || evs[0].Prev.String() != a {
			t.Errorf("Read(after %s) = %q, %v; want [%s] with Prev %s", a, idsOf(evs), err, c, a)
		}
		// Through the hub: resuming at a must not reset.
		sink := resume(t, st, "t", aID)
		if got := describe(sink.evs); !slices.Equal(got, []string{c}) {
			t.Errorf("hub resume after %s delivered %q, want [%s]", a, got, c)
		}
	})
}

// followStore makes a History a hub.Store whose live feed is always ready, to drive hub replays against Redis.
type followStore struct{ *History }

func (followStore) Follow(string) <-chan struct{} { ch := make(chan struct{}); close(ch); return ch }
func (followStore) Unfollow(string)               {}

type sliceSink struct{ evs []*hub.Event }

func (s *sliceSink) Deliver(b []*hub.Event) error { s.evs = append(s.evs, b...); return nil }
func (s *sliceSink) Idle() error                  { return nil }

func resume(t *testing.T, st *History, topic string, after hub.ID) *sliceSink {
	t.Helper()
	h := hub.New(followStore{st}, hub.Config{})
	defer h.Close()
	sub, err := h.Subscribe([]string{topic})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	sink := &sliceSink{}
	if err := sub.Start(ctxFor(t), []hub.From{{After: after, Set: true}}, sink); err != nil {
		t.Fatalf("Start(after %v) = %v", after, err)
	}
	return sink
}

// TestHubResumeBeforeAnInvalidNewestEntry: a client that saw every valid event, with only an invalid entry after
// it, has missed nothing.
func TestHubResumeBeforeAnInvalidNewestEntry(t *testing.T) {
	forBackends(t, func(t *testing.T, _ context.Context, b *backend) {
		st := b.store()
		a := b.publish(t, "t", "", `{"n":"a"}`)
		b.xadd(t, "t", "p", a, "t", "BAD", "d", `{}`)
		aID, _ := hub.ParseID(a)
		if got := describe(resume(t, st, "t", aID).evs); len(got) != 0 {
			t.Errorf("hub resume after %s (only an invalid entry follows) delivered %q, want nothing", a, got)
		}
	})
}

func TestHubResumeThroughStore(t *testing.T) {
	forBackends(t, func(t *testing.T, _ context.Context, b *backend) {
		st := b.store()
		var ids []string
		for i := range 5 {
			ids = append(ids, b.publish(t, "t", "", fmt.Sprintf(`{"i":%d}`, i)))
		}
		b.xadd(t, "t", "p", ids[4], "t", "progress", "d", `not json`)
		ids = append(ids, b.publish(t, "t", "", `{"i":5}`))
		from, _ := hub.ParseID(ids[1])
		if got := describe(resume(t, st, "t", from).evs); !slices.Equal(got, []string{ids[2], ids[3], ids[4], ids[5]}) {
			t.Errorf("hub resume after %s delivered %q, want %q", ids[1], got, ids[2:])
		}
	})
}

func TestStoreTopics(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		st := b.store()
		for i, topic := range []string{"t1", "t2", "t3", "t4", "t5"} {
			for j := 0; j <= i; j++ {
				b.rdb.XAdd(ctx, redisXAdd{stream: b.keys.Stream(topic), id: fmt.Sprintf("%d-%d", 1000*(i+1), j)}.args())
			}
		}
		// Not topics: another prefix, an invalid name, a key of another type.
		b.rdb.XAdd(ctx, redisXAdd{stream: "other:{x}:events", id: "9999-0"}.args())
		b.rdb.XAdd(ctx, redisXAdd{stream: b.prefix + ":{a b}:events", id: "9999-0"}.args())
		b.rdb.HSet(ctx, b.prefix+":{h}:events", "x", "y")

		all := func(limit int) ([]TopicInfo, bool, error) {
			l, err := st.Topics(ctx, TopicQuery{All: true, Limit: limit})
			return l.Topics, l.Truncated != "", err
		}
		got, truncated, err := all(10)
		if err != nil || truncated || len(got) != 5 {
			t.Fatalf("Topics(10) = %+v, %v, %v; want the 5 topics, not truncated", got, truncated, err)
		}
		for i, info := range got {
			n := 5 - i
			want := fmt.Sprintf("t%d", n)
			if info.Name != want || info.Length != int64(n) || info.LastID != fmt.Sprintf("%d-%d", 1000*n, n-1) || info.LastActivity.UnixMilli() != int64(1000*n) {
				t.Errorf("Topics(10)[%d] = %+v, want %s with %d entries, last %d-%d, most recent first", i, info, want, n, 1000*n, n-1)
			}
		}
		got, truncated, err = all(2)
		if err != nil || !truncated || len(got) != 2 || got[0].LastActivity.Before(got[1].LastActivity) {
			t.Errorf("Topics(2) = %+v, %v, %v; want 2, most recent first, and truncated", got, truncated, err)
		}
		if _, _, err := all(1); err != nil {
			t.Errorf("Topics(1) = %v", err)
		}
	})
}

func TestStoreTopicsIsBoundedOnALargeKeyspace(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		b.addStreams(t, "1-0", numbered("t%03d", 300)...)
		got, err := b.store().Topics(ctx, TopicQuery{All: true, Limit: 5})
		if err != nil || got.Truncated != "limit" || len(got.Topics) != 5 {
			t.Errorf("Topics(5) over 300 streams = %d topics, truncated %q, %v; want 5, truncated by the limit", len(got.Topics), got.Truncated, err)
		}
	})
}

func TestStoreSnapshot(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		reg := metered()
		st := NewHistory(b.rdb, HistoryConfig{Prefix: b.prefix, Registerer: reg})
		empty, err := st.Snapshot(ctx, "t")
		if err != nil || empty.Cursor != "0-0" || len(empty.Workflows) != 0 || len(empty.Locks) != 0 || empty.Topic != "t" {
			t.Fatalf("Snapshot of a topic without events = %+v, %v; want cursor 0-0 and nothing else", empty, err)
		}
		s1 := b.publish(t, "t", "", `{"workflow":"wf-1","step":"compile"}`)
		s2 := b.publish(t, "t", "", `{"workflow":"wf-2","step":"compile"}`)
		w1 := b.publish(t, "t", "", `{"workflow":"wf-1","step":"test"}`)
		lk := b.publish(t, "t", "lock", `{"key":"deploy","holder":"a","state":"acquired"}`)
		last := b.publish(t, "t", "log", `{"message":"no workflow"}`)
		b.rdb.HSet(ctx, b.keys.State("t"), "wf:broken", "{not json")
		snap, err := st.Snapshot(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		if snap.Cursor != last {
			t.Errorf("Snapshot cursor = %s, want the last event %s", snap.Cursor, last)
		}
		var env struct {
			ID   string          `json:"id"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(snap.Workflows["wf-1"], &env); err != nil || env.ID != w1 || !strings.Contains(string(env.Data), `"test"`) {
			t.Errorf("Snapshot wf-1 = %s, want the envelope of %s (step test)", snap.Workflows["wf-1"], w1)
		}
		if len(snap.Workflows) != 2 || snap.Workflows["broken"] != nil {
			t.Errorf("Snapshot workflows = %v, want wf-1 and wf-2 (broken JSON dropped)", snap.Workflows)
		}
		if want := map[string]string{"wf-1": s1, "wf-2": s2}; !maps.Equal(snap.Starts, want) {
			t.Errorf("Snapshot starts = %v, want each workflow's first event %v", snap.Starts, want)
		}
		if err := json.Unmarshal(snap.Locks["deploy"], &env); err != nil || env.ID != lk {
			t.Errorf("Snapshot lock deploy = %s, want the envelope of %s", snap.Locks["deploy"], lk)
		}
		if v := metricOf(t, reg, "hub_events_dropped_total", "reason="+dropInvalidJSON); v != 1 {
			t.Errorf("hub_events_dropped_total{invalid_json} = %v after a broken snapshot field, want 1", v)
		}
	})
}

func TestStoreErrorsWhenRedisIsDown(t *testing.T) {
	forBackends(t, func(t *testing.T, _ context.Context, b *backend) {
		st := b.store()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, _, err := st.Read(ctx, "t", hub.ID{}, 10); err == nil {
			t.Errorf("Read with a cancelled context: no error")
		}
		if _, _, err := st.Tail(ctx, "t", 10); err == nil {
			t.Errorf("Tail with a cancelled context: no error")
		}
		if _, err := st.Snapshot(ctx, "t"); err == nil {
			t.Errorf("Snapshot with a cancelled context: no error")
		}
		if _, err := st.Topics(ctx, TopicQuery{All: true, Limit: 10}); err == nil {
			t.Errorf("Topics with a cancelled context: no error")
		}
	})
}

func TestKeys(t *testing.T) {
	k := Keys{}
	if got := k.Stream("p.1"); got != "hub:{p.1}:events" {
		t.Errorf("Keys{}.Stream(p.1) = %q, want hub:{p.1}:events", got)
	}
	k = Keys{Prefix: "x"}
	for _, c := range []struct{ name, suffix, topic string }{
		{"x:{a.b}:live", "live", "a.b"},
		{"x:{a}:events", "events", "a"},
		{"x:{}:live", "live", ""},
		{"y:{a}:live", "live", ""},
		{"x:{a}:events", "live", ""},
		{"x:{a", "live", ""},
	} {
		topic, ok := k.TopicOf(c.name, c.suffix)
		if topic != c.topic || ok != (c.topic != "") {
			t.Errorf("TopicOf(%q, %q) = %q, %v; want %q", c.name, c.suffix, topic, ok, c.topic)
		}
	}
	if k.Channel("a") != "x:{a}:live" || k.State("a") != "x:{a}:state" || k.StreamPattern() != "x:{*}:events" {
		t.Errorf("Keys{x}: %s %s %s", k.Channel("a"), k.State("a"), k.StreamPattern())
	}
}
