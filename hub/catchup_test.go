package hub

import (
	"context"
	"slices"
	"testing"
)

// A repair burst larger than the queue (what Redis held back during an outage) must not evict a client that keeps
// up: the consumer sees Lagged and reads the rest from the store, exactly once and in order.
func TestRepairBurstLagsInsteadOfEvicting(t *testing.T) {
	st := newFakeStore()
	h := New(st, Config{ClientBuffer: 2})
	s := mustSubscribe(t, h, "t")
	mustStart(t, s, []From{{}}, &recSink{})
	for _, ev := range st.append("t", 5) {
		repaired := &Event{Topic: ev.Topic, ID: ev.ID, IDText: ev.IDText, Prev: ev.Prev, Type: ev.Type, Data: ev.Data, Source: SourceRepair}
		h.Broadcast(repaired)
	}
	if isDone(s) || !s.Lagged() {
		t.Fatalf("after a repair burst of 5 into a buffer of 2: Done=%v Lagged=%v, want running and lagged", isDone(s), s.Lagged())
	}
	got := drainAccepted(s)
	sink := &recSink{}
	if err := s.CatchUp(context.Background(), sink); err != nil {
		t.Fatalf("CatchUp = %v, want nil", err)
	}
	got = append(got, sink.got()...)
	if want := ids("t", 1, 5); !slices.Equal(describe(got), want) {
		t.Errorf("queued then caught up: %q, want %q", describe(got), want)
	}
	if s.Lagged() {
		t.Errorf("Lagged after CatchUp = true, want false")
	}
	// Back to live: a live event that overflows still evicts.
	for _, ev := range st.append("t", 3) {
		h.Broadcast(ev)
	}
	if !isDone(s) || s.Reason() != ReasonSlow {
		t.Errorf("live overflow after CatchUp: Done=%v Reason=%q, want evicted as %q", isDone(s), s.Reason(), ReasonSlow)
	}
	if err := s.CatchUp(context.Background(), sink); err == nil {
		t.Errorf("CatchUp on an evicted subscription = nil, want an EndedError")
	}
}
