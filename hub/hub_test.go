package hub

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	promtest "github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/syncverse/hub/internal/rig"
)

func mustSubscribe(t *testing.T, h *Hub, topics ...string) *Subscription {
	t.Helper()
	s, err := h.Subscribe(topics)
	if err != nil {
		t.Fatalf("Subscribe(%q) = %v, want a subscription", topics, err)
	}
	t.Cleanup(s.Close)
	return s
}

func mustStart(t *testing.T, s *Subscription, from []From, sink Sink) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Start(ctx, from, sink); err != nil {
		t.Fatalf("Start(%+v) = %v, want nil", from, err)
	}
}

func TestBroadcastReachesEverySubscriberOfTheTopicOnly(t *testing.T) {
	st := newFakeStore()
	h := New(st, Config{})
	a := mustSubscribe(t, h, "a")
	a2 := mustSubscribe(t, h, "a", "b")
	b := mustSubscribe(t, h, "b")
	for _, s := range []*Subscription{a, a2, b} {
		mustStart(t, s, make([]From, len(s.Topics())), &recSink{})
	}
	evA := st.append("a", 1)[0]
	evB := st.append("b", 1)[0]
	h.Broadcast(evA)
	h.Broadcast(evB)
	h.Broadcast(&Event{Topic: "nobody", Type: "progress", Data: []byte(`{}`), Source: SourceEphemeral})
	for _, c := range []struct {
		name string
		s    *Subscription
		want []string
	}{{"a", a, []string{"a:1-0"}}, {"a+b", a2, []string{"a:1-0", "b:1-0"}}, {"b", b, []string{"b:1-0"}}} {
		if got := describe(drainAccepted(c.s)); !slices.Equal(got, c.want) {
			t.Errorf("subscription %s after Broadcast(a:1-0), Broadcast(b:1-0): got %q, want %q", c.name, got, c.want)
		}
	}
}

func TestBroadcastOfResetAndEphemeralDoesNotPanic(t *testing.T) {
	h := New(newFakeStore(), Config{})
	s := mustSubscribe(t, h, "t")
	mustStart(t, s, []From{{}}, &recSink{})
	h.Broadcast(NewReset("t", ResetLost, ID{})) // Source "" has no received counter
	h.Broadcast(&Event{Topic: "t", Type: "progress", Data: []byte(`1`), Source: SourceEphemeral})
	got := drainAccepted(s)
	if len(got) != 2 || got[0].Type != "reset" || got[1].Stored() {
		t.Fatalf("Broadcast(reset), Broadcast(ephemeral): got %q, want the reset then the ephemeral event", describe(got))
	}
	if v := promtest.ToFloat64(h.Metrics().received[SourceEphemeral]); v != 1 {
		t.Errorf("hub_events_received_total{source=ephemeral} = %v, want 1", v)
	}
}

func TestAdvance(t *testing.T) {
	h := New(newFakeStore(), Config{})
	s := mustSubscribe(t, h, "a", "b")
	s.pos[0].last, s.pos[0].set = ID{Ms: 5}, true
	ev := func(topic string, ms uint64) *Event {
		id := ID{Ms: ms}
		return &Event{Topic: topic, ID: id, IDText: id.String()}
	}
	steps := []struct {
		ev  *Event
		dup bool
	}{
		{ev("a", 4), true},          // below the position
		{ev("a", 5), true},          // at the position: replayed already
		{ev("a", 6), false},         // after it
		{ev("a", 6), true},          // a duplicate
		{ev("b", 1), false},         // no position yet: anything stored is new
		{ev("b", 1), true},          // ...once
		{ev("c", 9), true},          // not subscribed
		{&Event{Topic: "a"}, false}, // ephemeral: never deduplicated
		{NewReset("a", ResetLost, ID{}), false},
	}
	for i, st := range steps {
		if got := s.Advance(st.ev); got != st.dup {
			t.Errorf("step %d: Advance(%s:%q) = %v, want %v", i, st.ev.Topic, st.ev.IDText, got, st.dup)
		}
	}
	if id, ok := s.Position(0); !ok || id != (ID{Ms: 6}) {
		t.Errorf("Position(0) = %v, %v; want 6-0, true", id, ok)
	}
	if s.index("b") != 1 || s.index("zz") != -1 {
		t.Errorf("index(b), index(zz) = %d, %d; want 1, -1", s.index("b"), s.index("zz"))
	}
}

func TestOverflowWhileLiveEvictsOnlyThatSubscription(t *testing.T) {
	st := newFakeStore()
	h := New(st, Config{ClientBuffer: 2})
	slow := mustSubscribe(t, h, "t")
	fast := mustSubscribe(t, h, "t")
	for _, s := range []*Subscription{slow, fast} {
		mustStart(t, s, []From{{}}, &recSink{})
	}
	var got []*Event
	for _, ev := range st.append("t", 5) {
		h.Broadcast(ev)
		got = append(got, drainAccepted(fast)...) // fast keeps up; slow never reads
	}
	if !isDone(slow) || slow.Reason() != ReasonSlow {
		t.Fatalf("after 5 Broadcasts into a buffer of 2: slow Done=%v Reason=%q, want Done, %q", isDone(slow), slow.Reason(), ReasonSlow)
	}
	if isDone(fast) || fast.Reason() != "" {
		t.Fatalf("fast consumer: Done=%v Reason=%q, want running", isDone(fast), fast.Reason())
	}
	if want := ids("t", 1, 5); !slices.Equal(describe(got), want) {
		t.Errorf("fast consumer got %q, want %q", describe(got), want)
	}
	// The evicted subscription is unregistered: nothing more is queued for it.
	queued := slow.queued()
	h.Broadcast(st.append("t", 1)[0])
	if slow.queued() != queued {
		t.Errorf("Broadcast after eviction queued for the evicted subscription (%d → %d events)", queued, slow.queued())
	}
	if err := slow.Start(context.Background(), []From{{}}, &recSink{}); err == nil {
		t.Errorf("Start on an evicted subscription = nil, want an EndedError")
	}
}

func TestCloseEndsEverySubscriptionWithShutdown(t *testing.T) {
	st := newFakeStore()
	h := New(st, Config{})
	subs := []*Subscription{mustSubscribe(t, h, "a"), mustSubscribe(t, h, "a", "b"), mustSubscribe(t, h, "c")}
	waiting := mustSubscribe(t, h, "d")
	st.hold = true
	held := mustSubscribe(t, h, "e") // Start waits for its live feed when Close comes
	errc := make(chan error, 1)
	go func() { errc <- held.Start(context.Background(), []From{{}}, &recSink{}) }()
	_ = waiting

	h.Close()
	h.Close() // idempotent
	for i, s := range append(subs, waiting, held) {
		if !isDone(s) || s.Reason() != ReasonShutdown {
			t.Errorf("subscription %d (%q) after Close: Done=%v Reason=%q, want Done, %q", i, s.Topics(), isDone(s), s.Reason(), ReasonShutdown)
		}
	}
	select {
	case err := <-errc:
		var ended *EndedError
		if !errors.As(err, &ended) || ended.Reason != ReasonShutdown {
			t.Errorf("Start waiting for readiness, then Close: returned %v, want EndedError{shutdown}", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Start waiting for readiness did not return after Close")
	}
	if s, err := h.Subscribe([]string{"a"}); !errors.Is(err, ErrClosed) || s != nil {
		t.Errorf("Subscribe after Close = %v, %v; want nil, ErrClosed", s, err)
	}
	if n := h.Topics(); n != 0 {
		t.Errorf("Topics() after Close = %d, want 0", n)
	}
	for _, topic := range []string{"a", "b", "c", "d", "e"} {
		if _, u := st.counts(topic); u != 1 {
			t.Errorf("Unfollow(%s) called %d times after Close, want 1", topic, u)
		}
	}
	subs[0].Close() // closing an ended subscription keeps its reason
	if subs[0].Reason() != ReasonShutdown {
		t.Errorf("Close after shutdown changed Reason to %q", subs[0].Reason())
	}
}

func TestUnfollowWhenLastSubscriberLeaves(t *testing.T) {
	st := newFakeStore()
	h := New(st, Config{})
	s1, _ := h.Subscribe([]string{"t", "u"})
	s2, _ := h.Subscribe([]string{"t"})
	if f, _ := st.counts("t"); f != 1 {
		t.Fatalf("two Subscribe(t): Follow(t) called %d times, want 1", f)
	}
	s1.Close()
	if _, u := st.counts("t"); u != 0 {
		t.Fatalf("one of two subscribers left: Unfollow(t) called %d times, want 0", u)
	}
	if _, u := st.counts("u"); u != 1 {
		t.Fatalf("the only subscriber of u left: Unfollow(u) called %d times, want 1", u)
	}
	s1.Close() // idempotent: no second Unfollow
	s2.Close()
	if _, u := st.counts("t"); u != 1 {
		t.Fatalf("the last subscriber of t left: Unfollow(t) called %d times, want 1", u)
	}
	if h.Topics() != 0 {
		t.Errorf("Topics() = %d after every subscriber left, want 0", h.Topics())
	}
	if v := promtest.ToFloat64(h.Metrics().subscriptions); v != 0 {
		t.Errorf("hub_subscriptions = %v after every subscriber left, want 0", v)
	}
	s3 := mustSubscribe(t, h, "t")
	if f, _ := st.counts("t"); f != 2 {
		t.Errorf("Subscribe(t) after the topic was dropped: Follow(t) called %d times in all, want 2", f)
	}
	_ = s3
}

func TestNewResetIsJSON(t *testing.T) {
	for _, c := range []struct {
		oldest ID
		want   any
	}{{ID{}, nil}, {ID{Ms: 1732870000000, Seq: 3}, "1732870000000-3"}} {
		ev := NewReset("project.42", ResetTruncated, c.oldest)
		var got map[string]any
		if err := json.Unmarshal(ev.Data, &got); err != nil {
			t.Fatalf("NewReset(oldest=%v).Data = %s: %v", c.oldest, ev.Data, err)
		}
		if got["topic"] != "project.42" || got["reason"] != ResetTruncated || got["oldest"] != c.want {
			t.Errorf("NewReset(project.42, %s, %v).Data = %s, want oldest %v", ResetTruncated, c.oldest, ev.Data, c.want)
		}
		if ev.Type != "reset" || ev.Stored() {
			t.Errorf("NewReset: Type=%q Stored=%v, want reset, not stored", ev.Type, ev.Stored())
		}
	}
}

func TestWireEncodesOnce(t *testing.T) {
	ev := &Event{Topic: "t", Data: []byte(`1`)}
	var calls atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := string(ev.Wire(func(*Event) []byte { calls.Add(1); return []byte("x") })); got != "x" {
				t.Errorf("Wire = %q, want x", got)
			}
		}()
	}
	wg.Wait()
	if calls.Load() != 1 {
		t.Errorf("Wire from 8 goroutines called encode %d times, want 1", calls.Load())
	}
}

// TestChurn subscribes, broadcasts and closes from many goroutines at once; -race and the absence of a panic (a send
// on a closed channel, a nil topic) are the assertions.
func TestChurn(t *testing.T) {
	st := newFakeStore()
	h := New(st, Config{ClientBuffer: 4})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for _, topic := range []string{"a", "b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					h.Broadcast(st.append(topic, 1)[0])
				}
			}
		}()
	}
	var made atomic.Int32
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				s, err := h.Subscribe([]string{"a", "b"})
				if err != nil {
					return
				}
				made.Add(1)
				drainAccepted(s)
				s.Close()
			}
		}()
	}
	rig.Eventually(t, 5*time.Second, "100 subscriptions made during churn", func() bool { return made.Load() >= 100 })
	h.Close()
	close(stop)
	wg.Wait()
	if v := promtest.ToFloat64(h.Metrics().subscriptions); v != 0 {
		t.Errorf("hub_subscriptions = %v after churn and Close, want 0", v)
	}
}
