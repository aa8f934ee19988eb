package pubsub

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/syncverse/hub/hub"
)

// A caller must never get the answer of a read sent before it asked (it could miss an event broadcast before it
// registered), but callers that arrive during one read share the next.
func TestReadGroupSharesOnlyReadsSentAfterTheCallerAsked(t *testing.T) {
	var g readGroup
	var sent atomic.Int32
	release := make(chan struct{})
	started := make(chan int32, 4)
	read := func() ([]*hub.Event, error) {
		n := sent.Add(1)
		started <- n
		<-release
		return []*hub.Event{{IDText: string(rune('0' + n))}}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got := make([]string, 3)
	var wg sync.WaitGroup
	wg.Go(func() { evs, _ := g.do(ctx, "k", read); got[0] = evs[0].IDText })
	<-started // read 1 is in flight
	for i := 1; i <= 2; i++ {
		wg.Go(func() { evs, _ := g.do(ctx, "k", read); got[i] = evs[0].IDText })
	}
	time.Sleep(20 * time.Millisecond) // let both join the next read
	release <- struct{}{}
	<-started // read 2 is sent only now, after both asked
	close(release)
	wg.Wait()
	if got[0] != "1" || got[1] != "2" || got[2] != "2" {
		t.Errorf("answers = %q, want [1 2 2]: the first caller gets read 1, the two that came during it share read 2", got)
	}
	if n := sent.Load(); n != 2 {
		t.Errorf("reads sent = %d, want 2", n)
	}
	if len(g.flying) != 0 || len(g.waiting) != 0 {
		t.Errorf("after every read: %d in flight, %d waiting, want none", len(g.flying), len(g.waiting))
	}
}
