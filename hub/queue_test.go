package hub

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
)

func numbered(n int) *Event { return &Event{Topic: "t", Type: strconv.Itoa(n)} }

func types(evs []*Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Type
	}
	return out
}

// TestQueueKeepsOrderAcrossGrowthAndWrap checks the ring against a plain slice through random pushes and takes, so
// growth happens with the ring wrapped, at every limit from 1 up.
func TestQueueKeepsOrderAcrossGrowthAndWrap(t *testing.T) {
	for _, limit := range []int{1, 3, 8, 9, 100, 256} {
		q := &queue{limit: limit}
		var model []*Event
		rng := rand.New(rand.NewPCG(uint64(limit), 7))
		next := 0
		for step := range 5000 {
			if rng.IntN(3) > 0 {
				ev := numbered(next)
				ok := q.push(ev)
				if want := len(model) < limit; ok != want {
					t.Fatalf("limit %d, step %d: push with %d queued = %v, want %v", limit, step, len(model), ok, want)
				}
				if ok {
					model = append(model, ev)
					next++
				}
				continue
			}
			k := rng.IntN(4) // small takes move the head, so the ring grows while wrapped
			if rng.IntN(10) == 0 {
				k = limit + 1 // and sometimes the queue empties, letting a big ring go
			}
			got := q.take(nil, k)
			want := model[:min(k, len(model))]
			if !slices.Equal(got, want) {
				t.Fatalf("limit %d, step %d: take(%d) = %q, want %q", limit, step, k, types(got), types(want))
			}
			model = model[len(want):]
			if q.len() != len(model) {
				t.Fatalf("limit %d, step %d: len = %d, want %d", limit, step, q.len(), len(model))
			}
		}
	}
}

func TestQueueRingGrowsOnDemandAndIsLetGoAfterABurst(t *testing.T) {
	q := &queue{limit: 256}
	if q.ring != nil {
		t.Fatalf("a new queue has a ring of %d slots, want none", len(q.ring))
	}
	q.push(numbered(0))
	if len(q.ring) != firstRing {
		t.Fatalf("after one push the ring has %d slots, want %d", len(q.ring), firstRing)
	}
	q.take(nil, 1)
	if len(q.ring) != firstRing {
		t.Errorf("a small ring emptied: %d slots, want it kept (%d)", len(q.ring), firstRing)
	}
	for i := range 200 {
		q.push(numbered(i))
	}
	if len(q.ring) != 256 {
		t.Errorf("200 queued: ring of %d slots, want 256 (doubling from %d, capped at the limit)", len(q.ring), firstRing)
	}
	got := q.take(nil, 150)
	if len(q.ring) != 256 {
		t.Errorf("50 still queued: ring of %d slots, want it kept at 256", len(q.ring))
	}
	for _, ev := range q.ring {
		if ev != nil && slices.Contains(got, ev) {
			t.Fatalf("the ring still holds taken event %s: it would stay alive", ev.Type)
		}
	}
	q.take(nil, 100)
	if q.ring != nil {
		t.Errorf("the burst was taken: ring of %d slots kept, want it let go (rings over %d are)", len(q.ring), keptRing)
	}
}

func TestQueueSignal(t *testing.T) {
	q := &queue{limit: 16}
	q.push(numbered(0))
	ready := q.signal() // made after an event was queued: it must already hold a token
	if !has(ready) {
		t.Fatal("signal made with an event queued holds no token")
	}
	q.take(nil, 1)
	if has(ready) {
		t.Error("the queue was emptied by take, but a token is left: the consumer would wake for nothing")
	}
	for i := range 5 {
		q.push(numbered(i))
	}
	<-ready
	q.take(nil, 2)
	if !has(ready) {
		t.Fatal("take left 3 events queued but no token: the consumer would never take them")
	}
	<-ready
	q.drop()
	if q.len() != 0 || has(ready) {
		t.Errorf("after drop: len %d, token %v, want 0, false", q.len(), has(ready))
	}
}

func has(c <-chan struct{}) bool { return len(c) > 0 }

// TestQueueOneProducerOneConsumer is the subscription's real use: Broadcast pushes while the consumer waits on the
// signal and takes. Run under -race it also checks the locking.
func TestQueueOneProducerOneConsumer(t *testing.T) {
	const n = 20000
	q := &queue{limit: n}
	ready := q.signal()
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range n {
			q.push(numbered(i))
		}
	})
	want := 0
	for want < n {
		<-ready
		for _, ev := range q.take(nil, 7) {
			if ev.Type != strconv.Itoa(want) {
				t.Fatalf("took event %s, want %d", ev.Type, want)
			}
			want++
		}
	}
	wg.Wait()
}
