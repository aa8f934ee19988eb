package pubsub

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/hub"
)

// A caller must never get the answer of a read sent before it asked (it could miss an event broadcast before it
// registered), but callers that arrive during one read share the next.
// It runs in a synctest bubble, so "both callers are waiting" is a condition (synctest.Wait), not a guess of time.
func TestReadGroupSharesOnlyReadsSentAfterTheCallerAsked(t *testing.T) {
	synctest.Test(t, readGroupSharesOnlyLaterReads)
}

func readGroupSharesOnlyLaterReads(t *testing.T) {
	var g readGroup[[]*hub.Event]
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
	synctest.Wait() // both have joined the next read: every goroutine of the bubble is blocked
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

// slowXRange delays every XRANGE/XREVRANGE the store sends and counts them, so concurrent callers surely overlap.
type slowXRange struct{ sent atomic.Int32 }

func (*slowXRange) DialHook(next redis.DialHook) redis.DialHook { return next }
func (*slowXRange) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h *slowXRange) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if name := cmd.Name(); name == "xrange" || name == "xrevrange" {
			h.sent.Add(1)
			time.Sleep(20 * time.Millisecond)
		}
		return next(ctx, cmd)
	}
}

// TestStoreCoalescesAStormOfIdenticalReads: 200 clients resuming at once from the same position (a hub restart) ask
// for the same range, the same tail and the same newest id; each answer is right, and a handful of commands answer
// them all.
func TestStoreCoalescesAStormOfIdenticalReads(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		ids := []string{b.publish(t, "t", "", `{"i":0}`), b.publish(t, "t", "", `{"i":1}`)}
		first, _ := hub.ParseID(ids[0])
		hook := &slowXRange{}
		b.rdb.AddHook(hook)
		st := b.store()
		const callers = 200
		ops := []struct {
			name string
			call func() (string, error)
		}{
			{"Read", func() (string, error) {
				evs, _, err := st.Read(ctx, "t", first, 10)
				return strings.Join(idsOf(evs), ","), err
			}},
			{"Tail", func() (string, error) { evs, _, err := st.Tail(ctx, "t", 2); return strings.Join(idsOf(evs), ","), err }},
			{"Newest", func() (string, error) { id, err := st.Newest(ctx, "t"); return id.String(), err }},
		}
		for _, op := range ops {
			want := map[string]string{"Read": ids[1], "Tail": ids[0] + "," + ids[1], "Newest": ids[1]}[op.name]
			hook.sent.Store(0)
			var wg sync.WaitGroup
			errs := make(chan string, callers)
			for range callers {
				wg.Go(func() {
					if got, err := op.call(); err != nil || got != want {
						errs <- fmt.Sprintf("%q, %v", got, err)
					}
				})
			}
			wg.Wait()
			close(errs)
			for e := range errs {
				t.Fatalf("%s by one of %d concurrent callers = %s, want %q", op.name, callers, e, want)
			}
			// One command in flight when most arrive, one more for them; a few more if the scheduler is slow.
			if n := hook.sent.Load(); n > 5 {
				t.Errorf("%d concurrent %s calls sent %d commands to Redis, want them coalesced (at most 5)", callers, op.name, n)
			}
		}
	})
}
