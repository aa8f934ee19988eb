package hub

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestReplayThenLiveNoGapNoDuplicate runs Start for many subscriptions while a publisher appends and broadcasts
// without pause, and checks each one sees every event after its position exactly once, in order. With a tiny buffer a
// consumer may be evicted once live (the policy); what it received up to then is checked all the same.
func TestReplayThenLiveNoGapNoDuplicate(t *testing.T) {
	for _, buffer := range []int{4096, 8} {
		t.Run(map[int]string{4096: "roomy", 8: "tiny buffer: lagged replays"}[buffer], func(t *testing.T) {
			st := newFakeStore()
			st.append("t", 300)
			h := New(st, Config{ClientBuffer: buffer, ReplayPage: 16})
			const total = 1500
			var published atomic.Int64
			published.Store(300)
			stop := make(chan struct{})
			var pub sync.WaitGroup
			pub.Add(1)
			go func() {
				defer pub.Done()
				for published.Load() < total {
					select {
					case <-stop:
						return
					default:
					}
					h.Broadcast(st.append("t", 1)[0])
					published.Add(1)
					if published.Load()%50 == 0 {
						time.Sleep(time.Millisecond) // let consumers keep up now and then
					}
				}
			}()
			froms := []From{{After: ID{}, Set: true}, {After: ID{Ms: 150}, Set: true}, {After: ID{Ms: 299}, Set: true}, {}, {History: 5}}
			var wg sync.WaitGroup
			results := make([][]*Event, len(froms))
			errs := make([]error, len(froms))
			for i, f := range froms {
				wg.Add(1)
				go func() {
					defer wg.Done()
					results[i], errs[i] = consumeUntil(h, f, ID{Ms: total}, &published)
				}()
			}
			wg.Wait()
			close(stop)
			pub.Wait()
			for i, f := range froms {
				checkOutcome(t, f, results[i], errs[i], total, buffer == 8)
			}
		})
	}
}

// checkOutcome requires the policy's outcome for one consumer: every event up to total, or (evictable only) an
// eviction as slow; either way what it received must be the chain without a gap or a duplicate.
func checkOutcome(t *testing.T, f From, got []*Event, err error, total uint64, evictable bool) {
	t.Helper()
	var ended *EndedError
	evicted := evictable && errors.As(err, &ended) && ended.Reason == ReasonSlow
	if err != nil && !evicted {
		t.Errorf("from %+v: consumer ended with %v after %d events, want all %d events%s", f, err, len(got), total,
			map[bool]string{true: " or an eviction as slow"}[evictable])
		return
	}
	checkChain(t, f, got, total, !evicted)
}

// consumeUntil subscribes from f and consumes, as the SSE conn does, until it has delivered last. Its first replayed
// batch is held until published has moved on by more than a tiny buffer holds, so live events are queued (and a tiny
// queue overflows) while the replay is under way on every run, not only when the scheduler interleaves them so.
func consumeUntil(h *Hub, f From, last ID, published *atomic.Int64) ([]*Event, error) {
	s, err := h.Subscribe([]string{"t"})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	target := min(published.Load()+32, int64(last.Ms))
	sink := &stallSink{until: func() bool { return published.Load() >= target }}
	if err := s.Start(ctx, []From{f}, sink); err != nil {
		return sink.got(), err
	}
	out := sink.got()
	ready := s.Ready()
	for len(out) == 0 || out[len(out)-1].ID.Less(last) {
		select {
		case <-ready:
			for _, ev := range s.Take(nil, 16) {
				if !s.Advance(ev) {
					out = append(out, ev)
				}
			}
		case <-s.Done():
			return out, &EndedError{Reason: s.Reason()}
		case <-ctx.Done():
			return out, ctx.Err()
		}
	}
	return out, nil
}

// stallSink is a recSink whose first Deliver waits (polling, for at most 5 s) until until holds.
type stallSink struct {
	recSink
	until   func() bool
	stalled bool
}

func (s *stallSink) Deliver(batch []*Event) error {
	if !s.stalled { // Start calls Deliver from one goroutine only
		s.stalled = true
		for deadline := time.Now().Add(5 * time.Second); !s.until() && time.Now().Before(deadline); {
			time.Sleep(100 * time.Microsecond)
		}
	}
	return s.recSink.Deliver(batch)
}

// checkChain checks got is the chain of events after f without a gap or a duplicate; complete says it must reach
// total (a consumer evicted on the way is checked up to where it was evicted).
func checkChain(t *testing.T, f From, got []*Event, total uint64, complete bool) {
	t.Helper()
	if len(got) == 0 {
		if complete || f.Set || f.History > 0 { // such a start replays stored events before anything can evict it
			t.Errorf("from %+v: nothing delivered", f)
		}
		return
	}
	first := f.After.Ms + 1
	if !f.Set {
		first = got[0].ID.Ms
		if f.History > 0 && len(got) < f.History {
			t.Errorf("from %+v: %d events, want at least the %d of history", f, len(got), f.History)
		}
	}
	for i, ev := range got {
		if want := first + uint64(i); ev.ID.Ms != want {
			t.Errorf("from %+v: event %d is %s, want %d-0 (gap or duplicate); around it: %q", f, i, ev.IDText, want,
				describe(got[max(0, i-3):min(len(got), i+3)]))
			return
		}
	}
	if last := got[len(got)-1].ID.Ms; complete && last != total {
		t.Errorf("from %+v: last event %d-0, want %d-0", f, last, total)
	}
}
