package pubsub

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/internal/rig"

	"github.com/syncverse/hub/hub"
)

// TestPresenceEntriesLiveUntilTheirDeadline: each hub's entry is a field of the topic's hash, in the topic's slot;
// a reader gets those of hubs whose liveness record is alive, and deletes one of a dead or unknown hub, one past its
// deadline or one that is not an entry; a dropped entry is gone, and the hash expires on its own.
func TestPresenceEntriesLiveUntilTheirDeadline(t *testing.T) {
	rs := rig.StartRedisWith(t, rig.RedisOptions{})
	rdb, prefix := rs.Client(), rig.Prefix(t)
	ctx := ctxFor(t)
	p := NewPresence(rdb, prefix, 30*time.Second, nil)
	now := time.Now()
	for id, until := range map[string]time.Time{"h1": now.Add(time.Minute), "h2": now.Add(time.Minute),
		"old": now.Add(time.Minute), "dead": now.Add(-time.Second)} {
		if _, err := p.Alive(ctx, id, until); err != nil {
			t.Fatal(err)
		}
	}
	put := func(e hub.PresenceEntry) {
		t.Helper()
		if err := p.PutPresence(ctx, map[string]hub.PresenceEntry{"t": e}); err != nil {
			t.Fatalf("PutPresence(%+v) = %v", e, err)
		}
	}
	put(hub.PresenceEntry{Hub: "h1", Count: 2, Users: []string{"alice"}, Deadline: now.Add(time.Minute)})
	put(hub.PresenceEntry{Hub: "h2", Count: 3, Users: []string{"bob"}, Truncated: true, Deadline: now.Add(time.Minute)})
	put(hub.PresenceEntry{Hub: "old", Count: 9, Deadline: now.Add(-time.Second)})
	put(hub.PresenceEntry{Hub: "dead", Count: 9, Deadline: now.Add(time.Hour)})
	put(hub.PresenceEntry{Hub: "unknown", Count: 9, Deadline: now.Add(time.Hour)})
	key := prefix + ":{t}:presence"
	if err := rdb.HSet(ctx, key, "junk", "not json").Err(); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.PTTL(ctx, key).Val(); ttl <= 50*time.Second || ttl > time.Hour {
		t.Errorf("the hash expires in %v; want near its longest entry's deadline", ttl)
	}
	got, err := p.ReadPresence(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	var hubs []string
	for _, e := range got {
		hubs = append(hubs, e.Hub)
	}
	slices.Sort(hubs)
	if !slices.Equal(hubs, []string{"h1", "h2"}) {
		t.Fatalf("ReadPresence = %+v, want the entries of h1 and h2", got)
	}
	if fields := rdb.HKeys(ctx, key).Val(); len(fields) != 2 {
		t.Errorf("after the read the hash holds %q; want the stale and unreadable fields deleted", fields)
	}
	if err := p.DropPresence(ctx, "t", "h1"); err != nil {
		t.Fatal(err)
	}
	if err := p.Gone(ctx, "h2"); err != nil {
		t.Fatal(err)
	}
	if fresh, err := p.Alive(ctx, "h1", now.Add(time.Minute)); err != nil || fresh {
		t.Errorf("Alive(h1) again = %v, %v; want not fresh", fresh, err)
	}
	if fresh, _ := p.Alive(ctx, "h2", now.Add(time.Minute)); !fresh {
		t.Errorf("Alive(h2) after Gone: want fresh (its entries may have been deleted)")
	}
	if got, _ := p.ReadPresence(ctx, "t"); len(got) != 1 || got[0].Hub != "h2" || got[0].Count != 3 || !got[0].Truncated {
		t.Errorf("after h1 dropped its entry ReadPresence = %+v, want h2's alone", got)
	}
}

// FuzzDecodePresence: whatever a field holds, decoding it either fails or gives an entry with a count that is not
// negative and a deadline.
func FuzzDecodePresence(f *testing.F) {
	f.Add(`{"count":2,"users":["a"],"until":1700000000000}`)
	f.Add(`{"count":-1,"until":1}`)
	f.Add(`null`)
	f.Add(`{"count":1e99}`)
	f.Fuzz(func(t *testing.T, v string) {
		e, err := decodePresence("h", []byte(v))
		if err == nil && (e.Count < 0 || e.Deadline.IsZero() || e.Hub != "h") {
			t.Errorf("decodePresence(%q) = %+v, want an error or a sound entry", v, e)
		}
	})
}

// TestPresenceIdleCostIsPerHub: a hub with 200 watched topics and nothing changing spends a few Redis commands per
// interval (its liveness record), counted by the server itself, not one per topic.
func TestPresenceIdleCostIsPerHub(t *testing.T) {
	rs := rig.StartRedisWith(t, rig.RedisOptions{})
	rdb, prefix := rs.Client(), rig.Prefix(t)
	ctx := ctxFor(t)
	h := hub.New(followStore{NewHistory(rdb, HistoryConfig{Prefix: prefix})}, hub.Config{})
	defer h.Close()
	pr := hub.NewPresence(h, NewPresence(rdb, prefix, time.Second, nil), hub.PresenceConfig{Hub: "h1",
		Interval: 100 * time.Millisecond, Expiry: time.Second, Debounce: 10 * time.Millisecond})
	run, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = pr.Run(run) }()
	t.Cleanup(func() { stop(); <-done })
	for i := range 200 {
		s, err := h.SubscribeAs([]string{fmt.Sprintf("t%d", i)}, hub.Viewer{User: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
	}
	rig.Eventually(t, 10*time.Second, "the 200 entries are written", func() bool {
		n := 0
		for i := range 200 {
			n += int(rdb.Exists(ctx, prefix+fmt.Sprintf(":{t%d}:presence", i)).Val())
		}
		return n == 200
	})
	calls := func() (hset int) {
		info := rdb.Info(ctx, "commandstats").Val()
		for _, line := range strings.Split(info, "\n") {
			if rest, ok := strings.CutPrefix(line, "cmdstat_hset:calls="); ok {
				hset, _ = strconv.Atoi(strings.SplitN(rest, ",", 2)[0])
			}
		}
		return hset
	}
	before, start := calls(), time.Now()
	rig.Eventually(t, 10*time.Second, "a second passes", func() bool { return time.Since(start) >= time.Second })
	intervals := int(time.Since(start)/(100*time.Millisecond)) + 1
	if n := calls() - before; n > 2*intervals {
		t.Errorf("%d idle intervals cost %d HSET with 200 topics; want about one per interval", intervals, n)
	}
}

var _ hub.PresenceStore = (*Presence)(nil)
