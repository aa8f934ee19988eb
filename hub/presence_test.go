package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/syncverse/hub/internal/rig"
)

// presenceStore is an in-memory PresenceStore that records every write.
type presenceStore struct {
	mu      sync.Mutex
	entries map[string]map[string]PresenceEntry // topic -> hub -> entry
	puts    map[string]int                      // topic -> PutPresence calls
	drops   map[string]int
	alive   map[string]time.Time // hub -> deadline of its record
	alives  int                  // Alive calls
	down    bool                 // writes and removals fail, as with Redis away
	refused int                  // writes and removals that failed
}

func newPresenceStore() *presenceStore {
	return &presenceStore{entries: map[string]map[string]PresenceEntry{}, puts: map[string]int{}, drops: map[string]int{},
		alive: map[string]time.Time{}}
}

func (s *presenceStore) PutPresence(_ context.Context, entries map[string]PresenceEntry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		s.refused++
		return errors.New("store down")
	}
	for topic, e := range entries {
		if s.entries[topic] == nil {
			s.entries[topic] = map[string]PresenceEntry{}
		}
		s.entries[topic][e.Hub] = e
		s.puts[topic]++
	}
	return nil
}

func (s *presenceStore) DropPresence(_ context.Context, topic, hubID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		s.refused++
		return errors.New("store down")
	}
	delete(s.entries[topic], hubID)
	s.drops[topic]++
	return nil
}

func (s *presenceStore) ReadPresence(_ context.Context, topic string) ([]PresenceEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []PresenceEntry
	for _, e := range s.entries[topic] {
		if time.Now().Before(e.Deadline) && time.Now().Before(s.alive[e.Hub]) {
			out = append(out, e)
		}
	}
	return out, nil
}

func (s *presenceStore) Alive(_ context.Context, hubID string, until time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.alive[hubID]
	s.alive[hubID] = until
	s.alives++
	return !ok, nil
}

func (s *presenceStore) Gone(_ context.Context, hubID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.alive, hubID)
	return nil
}

// writes is every entry written and every liveness record written so far.
func (s *presenceStore) writes() (entries, alives int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.puts {
		entries += n
	}
	return entries, s.alives
}

func (s *presenceStore) entry(topic, hubID string) (PresenceEntry, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[topic][hubID]
	return e, ok
}

func (s *presenceStore) counts(topic string) (puts, drops int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.puts[topic], s.drops[topic]
}

func subscribeAs(t *testing.T, h *Hub, v Viewer, topics ...string) *Subscription {
	t.Helper()
	s, err := h.SubscribeAs(topics, v)
	if err != nil {
		t.Fatalf("SubscribeAs(%q) = %v", topics, err)
	}
	t.Cleanup(s.Close)
	return s
}

// TestWatchersCountStreamsAndNameUsersOnce: two streams of alice and an anonymous one are three watchers and one
// name; the anonymous stream is never named; leaving takes each away; past the cap the names are truncated.
func TestWatchersCountStreamsAndNameUsersOnce(t *testing.T) {
	h := New(newFakeStore(), Config{})
	a1 := subscribeAs(t, h, Viewer{User: "alice"}, "t")
	subscribeAs(t, h, Viewer{User: "alice"}, "t", "u")
	anon := subscribeAs(t, h, Viewer{}, "t")
	subscribeAs(t, h, Viewer{User: "bob"}, "u")
	if w := h.Watchers("t", 10); w.Count != 3 || !slices.Equal(w.Users, []string{"alice"}) || w.Truncated {
		t.Fatalf("Watchers(t) = %+v, want 3 streams, users [alice]", w)
	}
	if w := h.Watchers("u", 10); w.Count != 2 || !slices.Equal(w.Users, []string{"alice", "bob"}) {
		t.Fatalf("Watchers(u) = %+v, want 2 streams, users [alice bob]", w)
	}
	if w := h.Watchers("u", 1); !slices.Equal(w.Users, []string{"alice"}) || !w.Truncated {
		t.Fatalf("Watchers(u, 1) = %+v, want [alice] and truncated", w)
	}
	a1.Close()
	anon.Close()
	if w := h.Watchers("t", 10); w.Count != 1 || !slices.Equal(w.Users, []string{"alice"}) {
		t.Fatalf("after two left, Watchers(t) = %+v, want 1 stream of alice", w)
	}
	if w := h.Watchers("nobody", 10); w.Count != 0 || len(w.Users) != 0 {
		t.Fatalf("Watchers(nobody) = %+v, want zero", w)
	}
}

// TestFramedTopicsFollowTheStreamsThatAskedForFrames: only topics with a stream that asked for frames are framed,
// and a topic stops being framed when its last such stream leaves, whatever else still watches it.
func TestFramedTopicsFollowTheStreamsThatAskedForFrames(t *testing.T) {
	h := New(newFakeStore(), Config{})
	plain := subscribeAs(t, h, Viewer{User: "alice"}, "t", "u")
	framed := subscribeAs(t, h, Viewer{User: "bob", Frames: true}, "u", "v")
	framed2 := subscribeAs(t, h, Viewer{Frames: true}, "v")
	if got := slices.Sorted(slices.Values(h.FramedTopics())); !slices.Equal(got, []string{"u", "v"}) {
		t.Fatalf("FramedTopics = %v, want [u v]", got)
	}
	framed.Close()
	if got := h.FramedTopics(); !slices.Equal(got, []string{"v"}) {
		t.Fatalf("after bob left, FramedTopics = %v, want [v] (u is still watched, but asks no frames)", got)
	}
	framed2.Close()
	plain.Close()
	if got := h.FramedTopics(); len(got) != 0 {
		t.Fatalf("after every stream left, FramedTopics = %v, want none", got)
	}
	if got := h.WatchedTopics(); len(got) != 0 {
		t.Fatalf("after every stream left, WatchedTopics = %v, want none", got)
	}
}

func runPresence(t *testing.T, h *Hub, st PresenceStore, cfg PresenceConfig) *Presence {
	t.Helper()
	p := NewPresence(h, st, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = p.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return p
}

// TestPresenceDebouncesABurstIntoFewWrites: 200 streams joining one topic at once are written as a handful of
// entries, not 200, and the last one counts them all; when they all leave the entry is removed; a topic nobody
// watches is never written.
func TestPresenceDebouncesABurstIntoFewWrites(t *testing.T) {
	h := New(newFakeStore(), Config{})
	st := newPresenceStore()
	runPresence(t, h, st, PresenceConfig{Hub: "h1", Interval: time.Hour, Debounce: 200 * time.Millisecond})
	var subs []*Subscription
	for i := range 200 {
		subs = append(subs, subscribeAs(t, h, Viewer{User: []string{"alice", "bob", ""}[i%3]}, "t"))
	}
	rig.Eventually(t, 5*time.Second, "the entry counts 200 streams", func() bool {
		e, ok := st.entry("t", "h1")
		return ok && e.Count == 200 && slices.Equal(e.Users, []string{"alice", "bob"})
	})
	if puts, _ := st.counts("t"); puts > 5 {
		t.Errorf("200 joins made %d writes; want a handful (debounced)", puts)
	}
	for _, s := range subs {
		s.Close()
	}
	rig.Eventually(t, 5*time.Second, "the entry is removed", func() bool {
		_, ok := st.entry("t", "h1")
		return !ok
	})
	if _, drops := st.counts("never"); drops != 0 {
		t.Errorf("a topic nobody watched was dropped %d times", drops)
	}
}

// TestPresenceIdleCostIsPerHub: with 300 topics watched here and nothing changing, each interval writes the hub's
// one liveness record and no entry (the entries' turns to be re-touched are an hour apart), so ten intervals cost
// about ten writes, not 3,000.
func TestPresenceIdleCostIsPerHub(t *testing.T) {
	h := New(newFakeStore(), Config{})
	st := newPresenceStore()
	runPresence(t, h, st, PresenceConfig{Hub: "h1", Interval: 50 * time.Millisecond, Expiry: time.Second,
		Debounce: 10 * time.Millisecond})
	for i := range 300 {
		subscribeAs(t, h, Viewer{User: "alice"}, fmt.Sprintf("t%d", i))
	}
	rig.Eventually(t, 10*time.Second, "the 300 entries are written", func() bool {
		for i := range 300 {
			if _, ok := st.entry(fmt.Sprintf("t%d", i), "h1"); !ok {
				return false
			}
		}
		return true
	})
	entries0, alives0 := st.writes()
	rig.Eventually(t, 20*time.Second, "ten intervals pass", func() bool {
		_, alives := st.writes()
		return alives >= alives0+10
	})
	entries, alives := st.writes()
	if n := entries - entries0; n > 10 {
		t.Errorf("%d idle intervals rewrote %d entries; want the liveness record alone (a few re-touches at most)", alives-alives0, n)
	}
}

func (s *presenceStore) setDown(down bool) {
	s.mu.Lock()
	s.down = down
	s.mu.Unlock()
}

func (s *presenceStore) refusals() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// TestPresenceRetriesWhatFailedAtTheNextInterval: while the store refuses, a new topic's entry and a left topic's
// removal fail; once it answers again, the next intervals write the one and remove the other, although neither
// topic's turn to be re-touched comes for an hour.
func TestPresenceRetriesWhatFailedAtTheNextInterval(t *testing.T) {
	h := New(newFakeStore(), Config{})
	st := newPresenceStore()
	runPresence(t, h, st, PresenceConfig{Hub: "h1", Interval: 50 * time.Millisecond, Expiry: time.Minute,
		Debounce: 10 * time.Millisecond})
	gone := subscribeAs(t, h, Viewer{User: "alice"}, "gone")
	rig.Eventually(t, 5*time.Second, "gone's entry is written", func() bool { _, ok := st.entry("gone", "h1"); return ok })
	st.setDown(true)
	gone.Close()
	subscribeAs(t, h, Viewer{User: "bob"}, "new")
	// the debounced write and removal fail, then the retries of the intervals after
	rig.Eventually(t, 5*time.Second, "writes refused at a few intervals", func() bool { return st.refusals() >= 6 })
	if _, ok := st.entry("new", "h1"); ok {
		t.Fatal("an entry was written while the store refused writes")
	}
	st.setDown(false)
	rig.Eventually(t, 5*time.Second, "new's entry written and gone's removed", func() bool {
		e, ok := st.entry("new", "h1")
		_, stale := st.entry("gone", "h1")
		return ok && e.Count == 1 && !stale
	})
}

// TestPresenceReTouchesEntriesAndRewritesThemAfterALapse: each entry is rewritten once per quarter of its hold, with
// a later deadline; and when the hub's record was gone (readers took the hub for dead), every entry is written again.
func TestPresenceReTouchesEntriesAndRewritesThemAfterALapse(t *testing.T) {
	h := New(newFakeStore(), Config{})
	st := newPresenceStore()
	runPresence(t, h, st, PresenceConfig{Hub: "h1", Interval: 50 * time.Millisecond, Expiry: 500 * time.Millisecond,
		Hold:     2 * time.Second,
		Debounce: 10 * time.Millisecond})
	subscribeAs(t, h, Viewer{User: "alice"}, "t")
	rig.Eventually(t, 5*time.Second, "the entry is written", func() bool { _, ok := st.entry("t", "h1"); return ok })
	first, _ := st.entry("t", "h1")
	rig.Eventually(t, 10*time.Second, "the entry is re-touched with a later deadline", func() bool {
		e, _ := st.entry("t", "h1")
		return e.Deadline.After(first.Deadline)
	})
	_ = st.Gone(context.Background(), "h1") // as a reader that found the record dead
	_ = st.DropPresence(context.Background(), "t", "h1")
	rig.Eventually(t, 5*time.Second, "the entry is written again", func() bool { _, ok := st.entry("t", "h1"); return ok })
}

// TestPresenceTotalAddsHubsAndFramesFollowChanges: the total adds other hubs' live entries to this hub's own
// watchers, names a user once, and ignores the entry of a hub whose record is dead; a stream that asked for frames gets one with
// users when it may see them, another with the count only, and a stream that did not ask gets none. Frames have no id.
func TestPresenceTotalAddsHubsAndFramesFollowChanges(t *testing.T) {
	h := New(newFakeStore(), Config{})
	st := newPresenceStore()
	_ = st.PutPresence(context.Background(), map[string]PresenceEntry{"t": {Hub: "h2", Count: 2, Users: []string{"alice", "bob"},
		Deadline: time.Now().Add(time.Hour)}})
	_ = st.PutPresence(context.Background(), map[string]PresenceEntry{"t": {Hub: "dead", Count: 7, Users: []string{"carol"},
		Deadline: time.Now().Add(time.Hour)}})
	_, _ = st.Alive(context.Background(), "h2", time.Now().Add(time.Hour))
	_, _ = st.Alive(context.Background(), "dead", time.Now().Add(-time.Second))
	p := runPresence(t, h, st, PresenceConfig{Hub: "h1", Interval: time.Hour, Frames: 50 * time.Millisecond})
	all := func(string) bool { return true }
	seer := subscribeAs(t, h, Viewer{User: "alice", Frames: true, SeeUsers: all}, "t")
	counter := subscribeAs(t, h, Viewer{Frames: true}, "t")
	quiet := subscribeAs(t, h, Viewer{User: "dave"}, "t")

	tot, err := p.Total(context.Background(), "t")
	if err != nil || tot.Count != 5 || tot.Hubs != 2 || !slices.Equal(tot.Users, []string{"alice", "bob", "dave"}) {
		t.Fatalf("Total = %+v, %v; want 5 streams on 2 hubs, users alice bob dave", tot, err)
	}
	frame := func(s *Subscription) map[string]any {
		var got map[string]any
		rig.Eventually(t, 5*time.Second, "a presence frame", func() bool {
			for _, ev := range s.Take(nil, 10) {
				if ev.Type == PresenceType && !ev.Stored() {
					got = nil
					_ = json.Unmarshal(ev.Data, &got)
				}
			}
			return got != nil && got["count"] == float64(5)
		})
		return got
	}
	if f := frame(seer); f["users"] == nil || f["hubs"] != float64(2) {
		t.Errorf("frame to a viewer who may see users = %v, want users and hubs 2", f)
	}
	if f := frame(counter); f["users"] != nil {
		t.Errorf("frame to a viewer who may not see users = %v, want the count only", f)
	}
	if evs := quiet.Take(nil, 10); len(evs) != 0 {
		t.Errorf("a stream that did not ask for frames got %d events", len(evs))
	}
	quiet.Close() // dave leaves: the count and the users change
	rig.Eventually(t, 5*time.Second, "a frame without dave", func() bool {
		for _, ev := range seer.Take(nil, 10) {
			var got Total
			if json.Unmarshal(ev.Data, &got) == nil && got.Count == 4 && !slices.Contains(got.Users, "dave") {
				return true
			}
		}
		return false
	})
}
