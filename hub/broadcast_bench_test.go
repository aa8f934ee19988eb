package hub

import (
	"context"
	"fmt"
	"testing"
)

// benchStore follows every topic at once and stores nothing: Broadcast's cost alone.
type benchStore struct{ ready chan struct{} }

func (s benchStore) Follow(string) <-chan struct{} { return s.ready }
func (benchStore) Unfollow(string)                 {}
func (benchStore) Read(context.Context, string, ID, int) ([]*Event, bool, error) {
	return nil, false, nil
}
func (benchStore) Tail(context.Context, string, int) ([]*Event, bool, error) { return nil, false, nil }
func (benchStore) Newest(context.Context, string) (ID, error)                { return ID{}, nil }

// BenchmarkBroadcast measures one event handed to every subscriber of its topic: a non-blocking push each. The
// queues are emptied outside the timer, as a live client's writer would, so no subscription is ever evicted: every
// 32 events (a client keeping up; its ring stays made) or every 200 (a burst: the rings grow, then are let go).
func BenchmarkBroadcast(b *testing.B) {
	for _, c := range []struct{ n, depth int }{{1, 32}, {1000, 32}, {10000, 32}, {1000, 200}, {10000, 200}} {
		b.Run(fmt.Sprintf("subscribers=%d/queued=%d", c.n, c.depth), func(b *testing.B) {
			n := c.n
			h := New(benchStore{ready: closedChan()}, Config{})
			subs := make([]*Subscription, n)
			for i := range subs {
				s, err := h.Subscribe([]string{"project.42"})
				if err != nil {
					b.Fatal(err)
				}
				subs[i] = s
			}
			ev := &Event{Topic: "project.42", ID: ID{Ms: 1, Seq: 1}, IDText: "1-1", Type: "progress",
				Data: []byte(`{"workflow":"wf-1","progress":0.5}`), Source: SourceLive}
			for range c.depth { // the rings a client keeping up has made already
				h.Broadcast(ev)
			}
			for _, s := range subs {
				s.Take(nil, c.depth)
			}
			queued := 0
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				h.Broadcast(ev)
				if queued++; queued == c.depth {
					b.StopTimer()
					for _, s := range subs {
						s.drain()
					}
					queued = 0
					b.StartTimer()
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/delivery")
			for _, s := range subs {
				if s.Reason() != "" {
					b.Fatalf("subscription ended (%s) during the benchmark", s.Reason())
				}
				s.Close()
			}
		})
	}
}

func closedChan() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// BenchmarkParseID and BenchmarkIDAppend are the cursor's number work: every Last-Event-ID and every multi-topic
// frame pass through them.
func BenchmarkParseID(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseID("1732870000000-17"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkIDAppend(b *testing.B) {
	id := ID{Ms: 1732870000000, Seq: 17}
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf = id.Append(buf[:0])
	}
}

// BenchmarkSubscribe is n clients joining one topic and leaving it again, as a reconnect storm does: one op is one
// join and one leave, with n-1 others subscribed.
func BenchmarkSubscribe(b *testing.B) {
	for _, n := range []int{1000, 20000} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) {
			h := New(benchStore{ready: closedChan()}, Config{})
			defer h.Close()
			for range n - 1 {
				if _, err := h.Subscribe([]string{"project.42"}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				s, err := h.Subscribe([]string{"project.42"})
				if err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
		})
	}
}
