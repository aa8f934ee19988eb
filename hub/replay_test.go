package hub

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/syncverse/hub/internal/rig"
)

func resetOf(topic, reason, oldest string) string {
	if oldest == "" {
		return `reset{"topic":"` + topic + `","reason":"` + reason + `","oldest":null}`
	}
	return `reset{"topic":"` + topic + `","reason":"` + reason + `","oldest":"` + oldest + `"}`
}

// TestStartReplays covers where Start begins and which resets it sends, each case on its own store.
func TestStartReplays(t *testing.T) {
	cases := []struct {
		name    string
		cfg     Config
		setup   func(st *fakeStore)
		from    From
		want    []string
		wantPos ID
	}{
		{
			name:  "resume in the middle",
			setup: func(st *fakeStore) { st.append("t", 10) },
			from:  From{After: ID{Ms: 7}, Set: true},
			want:  ids("t", 8, 10), wantPos: ID{Ms: 10},
		},
		{
			name:  "resume at the newest event",
			setup: func(st *fakeStore) { st.append("t", 10) },
			from:  From{After: ID{Ms: 10}, Set: true},
			want:  nil, wantPos: ID{Ms: 10},
		},
		{
			name:  "resume from 0-0 replays everything",
			setup: func(st *fakeStore) { st.append("t", 3) },
			from:  From{Set: true},
			want:  ids("t", 1, 3), wantPos: ID{Ms: 3},
		},
		{
			name:  "resume before the oldest: truncated",
			setup: func(st *fakeStore) { st.append("t", 10); st.trim("t", 4) },
			from:  From{After: ID{Ms: 2}, Set: true},
			want:  append([]string{resetOf("t", ResetTruncated, "7-0")}, ids("t", 7, 10)...), wantPos: ID{Ms: 10},
		},
		{
			name:  "stream restarted empty then refilled: lost",
			setup: func(st *fakeStore) { st.append("t", 5); st.lose("t"); st.append("t", 2) },
			from:  From{After: ID{Ms: 4}, Set: true},
			want:  append([]string{resetOf("t", ResetLost, "6-0")}, ids("t", 6, 7)...), wantPos: ID{Ms: 7},
		},
		{
			name:  "position vanished in a failover, the stream went on: lost",
			setup: func(st *fakeStore) { st.append("t", 5); st.dropNewest("t", 2); st.append("t", 2) },
			from:  From{After: ID{Ms: 5}, Set: true},
			want:  append([]string{resetOf("t", ResetLost, "6-0")}, ids("t", 6, 7)...), wantPos: ID{Ms: 7},
		},
		{
			name:  "position newer than the newest: lost",
			setup: func(st *fakeStore) { st.append("t", 5) },
			from:  From{After: ID{Ms: 99}, Set: true},
			want:  []string{resetOf("t", ResetLost, "")}, wantPos: ID{Ms: 5},
		},
		{
			name:  "position in an empty stream: lost",
			setup: func(st *fakeStore) {},
			from:  From{After: ID{Ms: 99}, Set: true},
			want:  []string{resetOf("t", ResetLost, "")}, wantPos: ID{},
		},
		{
			name:  "more than MaxReplay: replay-limit reset and skip to the end",
			cfg:   Config{MaxReplay: 5, ReplayPage: 2},
			setup: func(st *fakeStore) { st.append("t", 20) },
			from:  From{Set: true},
			want:  append(ids("t", 1, 4), resetOf("t", ResetReplayLimit, "")), wantPos: ID{Ms: 20}, // it continues live from the end
		},
		{
			name:  "fresh: nothing replayed, position at the newest",
			setup: func(st *fakeStore) { st.append("t", 5) },
			from:  From{},
			want:  nil, wantPos: ID{Ms: 5},
		},
		{
			name:  "fresh with history=3",
			setup: func(st *fakeStore) { st.append("t", 5) },
			from:  From{History: 3},
			want:  ids("t", 3, 5), wantPos: ID{Ms: 5},
		},
		{
			name:  "fresh with history larger than the stream",
			setup: func(st *fakeStore) { st.append("t", 2) },
			from:  From{History: 50},
			want:  ids("t", 1, 2), wantPos: ID{Ms: 2},
		},
		{
			name:  "fresh with history capped by MaxReplay",
			cfg:   Config{MaxReplay: 4},
			setup: func(st *fakeStore) { st.append("t", 10) },
			from:  From{History: 9},
			want:  ids("t", 7, 10), wantPos: ID{Ms: 10},
		},
		{
			name:  "fresh on an empty stream",
			setup: func(st *fakeStore) {},
			from:  From{History: 3},
			want:  nil, wantPos: ID{},
		},
		{
			name:  "resume across pages the store cut short (bytes)",
			setup: func(st *fakeStore) { st.append("t", 10); st.pageMax = 3 },
			from:  From{After: ID{Ms: 1}, Set: true},
			want:  ids("t", 2, 10), wantPos: ID{Ms: 10},
		},
		{
			name:  "fresh with a history larger than a page",
			setup: func(st *fakeStore) { st.append("t", 10); st.pageMax = 2 },
			from:  From{History: 5},
			want:  ids("t", 6, 10), wantPos: ID{Ms: 10},
		},
		{
			name:  "resume across several pages",
			cfg:   Config{ReplayPage: 3},
			setup: func(st *fakeStore) { st.append("t", 10) },
			from:  From{After: ID{Ms: 1}, Set: true},
			want:  ids("t", 2, 10), wantPos: ID{Ms: 10},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := newFakeStore()
			c.setup(st)
			h := New(st, c.cfg)
			s := mustSubscribe(t, h, "t")
			sink := &recSink{}
			mustStart(t, s, []From{c.from}, sink)
			if got := describe(sink.got()); !slices.Equal(got, c.want) {
				t.Errorf("Start(%+v) delivered %q, want %q", c.from, got, c.want)
			}
			if pos, ok := s.Position(0); !ok || pos != c.wantPos {
				t.Errorf("Start(%+v): Position(0) = %v, %v; want %v, true", c.from, pos, ok, c.wantPos)
			}
			// The next event continues from there without a duplicate.
			next := st.append("t", 1)[0]
			h.Broadcast(next)
			if got := describe(drainAccepted(s)); !slices.Equal(got, []string{"t:" + next.IDText}) {
				t.Errorf("after Start, Broadcast(%s) gave %q, want just it", next.IDText, got)
			}
		})
	}
}

// TestLiveEventsQueuedDuringReplayAreNotDuplicated: what Broadcast queued while Start replayed is dropped by Accept
// up to the last replayed id, and delivered after it.
func TestLiveEventsQueuedDuringReplayAreNotDuplicated(t *testing.T) {
	st := newFakeStore()
	st.append("t", 5)
	h := New(st, Config{ReplayPage: 2})
	s := mustSubscribe(t, h, "t")
	st.afterRead = func(topic string, after ID) {
		if after == (ID{Ms: 1}) { // the first page is read: two more events are published meanwhile
			for _, ev := range st.append("t", 2) {
				h.Broadcast(ev)
			}
		}
	}
	sink := &recSink{}
	mustStart(t, s, []From{{After: ID{Ms: 1}, Set: true}}, sink)
	st.afterRead = nil
	replayed := describe(sink.got())
	live := describe(drainAccepted(s))
	if got, want := append(replayed, live...), ids("t", 2, 7); !slices.Equal(got, want) {
		t.Errorf("replay %q then live %q; want together %q, each once", replayed, live, want)
	}
}

// TestOverflowDuringReplayRereads: a queue that fills while Start still replays marks the subscription lagged; Start
// then reads the stream again instead of evicting it.
func TestOverflowDuringReplayRereads(t *testing.T) {
	st := newFakeStore()
	st.append("t", 5)
	h := New(st, Config{ClientBuffer: 2, ReplayPage: 100})
	s := mustSubscribe(t, h, "t")
	flooded := false
	st.afterRead = func(topic string, after ID) {
		if !flooded {
			flooded = true
			for _, ev := range st.append("t", 6) { // 6 events into a queue of 2
				h.Broadcast(ev)
			}
		}
	}
	sink := &recSink{}
	mustStart(t, s, []From{{After: ID{Ms: 1}, Set: true}}, sink)
	st.afterRead = nil
	if isDone(s) {
		t.Fatalf("overflow during replay ended the subscription (%q), want a re-read", s.Reason())
	}
	if st.reads < 2 {
		t.Errorf("overflow during replay: %d store reads, want a second pass", st.reads)
	}
	replayed := describe(sink.got())
	live := describe(drainAccepted(s))
	if got, want := append(replayed, live...), ids("t", 2, 11); !slices.Equal(got, want) {
		t.Errorf("replay %q then live %q; want together %q, each once", replayed, live, want)
	}
	if isDone(s) || s.Reason() != "" {
		t.Errorf("after an overflow during replay: Done=%v Reason=%q, want still running", isDone(s), s.Reason())
	}
	// Now live: the same overflow evicts.
	for _, ev := range st.append("t", 3) {
		h.Broadcast(ev)
	}
	if !isDone(s) || s.Reason() != ReasonSlow {
		t.Errorf("overflow while live: Done=%v Reason=%q, want evicted as %q", isDone(s), s.Reason(), ReasonSlow)
	}
}

func TestStartMultiTopic(t *testing.T) {
	st := newFakeStore()
	st.append("a", 4)
	st.append("b", 3)
	h := New(st, Config{})
	s := mustSubscribe(t, h, "a", "b", "c")
	sink := &recSink{}
	mustStart(t, s, []From{{After: ID{Ms: 2}, Set: true}, {History: 1}, {}}, sink)
	want := append(ids("a", 3, 4), "b:3-0")
	if got := describe(sink.got()); !slices.Equal(got, want) {
		t.Errorf("Start(a after 2-0, b history 1, c fresh) delivered %q, want %q", got, want)
	}
	for i, want := range []ID{{Ms: 4}, {Ms: 3}, {}} {
		if pos, ok := s.Position(i); !ok || pos != want {
			t.Errorf("Position(%d) = %v, %v; want %v, true", i, pos, ok, want)
		}
	}
}

// In a synctest bubble: Start calls Sink.Idle every idleEvery (a second) of the bubble's clock, at no real cost.
func TestStartWaitsForTheLiveFeedAndKeepsTheSinkAlive(t *testing.T) {
	synctest.Test(t, startWaitsForTheLiveFeed)
}

func startWaitsForTheLiveFeed(t *testing.T) {
	st := newFakeStore()
	st.hold = true
	st.append("t", 2)
	h := New(st, Config{})
	s := mustSubscribe(t, h, "t")
	sink := &recSink{}
	errc := make(chan error, 1)
	go func() { errc <- s.Start(context.Background(), []From{{Set: true}}, sink) }()
	rig.Eventually(t, 5*time.Second, "Sink.Idle while Start waits for Follow's ready", func() bool { return sink.idleCount() >= 2 })
	if n := len(sink.got()); n != 0 {
		t.Fatalf("Start delivered %d events before the live feed was ready, want 0", n)
	}
	st.release("t")
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("Start after ready = %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Start did not return after the live feed became ready")
	}
	if got := describe(sink.got()); !slices.Equal(got, ids("t", 1, 2)) {
		t.Errorf("delivered %q, want %q", got, ids("t", 1, 2))
	}
}

func TestStartRetriesAFailingStore(t *testing.T) {
	st := newFakeStore()
	st.append("t", 3)
	st.readErrs = 3
	h := New(st, Config{})
	s := mustSubscribe(t, h, "t")
	sink := &recSink{}
	mustStart(t, s, []From{{Set: true}}, sink)
	if got := describe(sink.got()); !slices.Equal(got, ids("t", 1, 3)) {
		t.Errorf("after 3 failed reads: delivered %q, want %q", got, ids("t", 1, 3))
	}
	if sink.idleCount() < 3 {
		t.Errorf("Sink.Idle called %d times while the store failed, want at least 3", sink.idleCount())
	}
}

func TestStartEnds(t *testing.T) {
	t.Run("sink error", func(t *testing.T) {
		st := newFakeStore()
		st.append("t", 3)
		s := mustSubscribe(t, New(st, Config{}), "t")
		if err := s.Start(context.Background(), []From{{Set: true}}, &recSink{failOn: 1}); err == nil || err.Error() != "sink: broken pipe" {
			t.Errorf("Start with a failing Deliver = %v, want the sink's error", err)
		}
	})
	t.Run("idle error while the store fails", func(t *testing.T) {
		st := newFakeStore()
		st.readErrs = 1000
		s := mustSubscribe(t, New(st, Config{}), "t")
		sinkErr := errors.New("client gone")
		if err := s.Start(context.Background(), []From{{Set: true}}, &recSink{idleErr: sinkErr}); !errors.Is(err, sinkErr) {
			t.Errorf("Start with a failing Idle = %v, want %v", err, sinkErr)
		}
	})
	t.Run("context cancelled while waiting", func(t *testing.T) {
		st := newFakeStore()
		st.hold = true
		s := mustSubscribe(t, New(st, Config{}), "t")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		if err := s.Start(ctx, []From{{}}, &recSink{}); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Start with an expiring context = %v, want DeadlineExceeded", err)
		}
	})
	t.Run("closed while the store fails", func(t *testing.T) {
		st := newFakeStore()
		st.readErrs = 1000
		s := mustSubscribe(t, New(st, Config{}), "t")
		go func() {
			for st.readsSoFar() < 2 {
				time.Sleep(time.Millisecond)
			}
			s.Close()
		}()
		var ended *EndedError
		err := s.Start(context.Background(), []From{{Set: true}}, &recSink{})
		if !errors.As(err, &ended) || ended.Reason != ReasonClosed {
			t.Errorf("Start, then Close while retrying = %v, want EndedError{closed}", err)
		}
		if err != nil && err.Error() != "subscription ended: closed" {
			t.Errorf("EndedError text = %q", err.Error())
		}
	})
}

func (f *fakeStore) readsSoFar() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads
}
