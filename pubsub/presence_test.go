package pubsub

import (
	"slices"
	"testing"
	"time"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/redistest"
)

// TestPresenceEntriesLiveUntilTheirDeadline: each hub's entry is a field of the topic's hash, in the topic's slot;
// a reader gets the live ones, and deletes one past its deadline or one that is not an entry; a dropped entry is
// gone, and the hash expires on its own.
func TestPresenceEntriesLiveUntilTheirDeadline(t *testing.T) {
	rs := redistest.StartReal(t, redistest.Options{})
	rdb, prefix := rs.Client(), redistest.Prefix(t)
	ctx := ctxFor(t)
	p := NewPresence(rdb, prefix, 30*time.Second, nil)
	now := time.Now()
	put := func(e hub.PresenceEntry) {
		t.Helper()
		if err := p.PutPresence(ctx, map[string]hub.PresenceEntry{"t": e}); err != nil {
			t.Fatalf("PutPresence(%+v) = %v", e, err)
		}
	}
	put(hub.PresenceEntry{Hub: "h1", Count: 2, Users: []string{"alice"}, Deadline: now.Add(time.Minute)})
	put(hub.PresenceEntry{Hub: "h2", Count: 3, Users: []string{"bob"}, Truncated: true, Deadline: now.Add(time.Minute)})
	put(hub.PresenceEntry{Hub: "dead", Count: 9, Deadline: now.Add(-time.Second)})
	key := prefix + ":{t}:presence"
	if err := rdb.HSet(ctx, key, "junk", "not json").Err(); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.PTTL(ctx, key).Val(); ttl <= 90*time.Second || ttl > 2*time.Minute {
		t.Errorf("the hash expires in %v; want past three entry expiries, within four", ttl)
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

var _ hub.PresenceStore = (*Presence)(nil)
