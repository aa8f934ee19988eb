package chaos

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/rig"
)

// Fleet is a set of clients started and checked together.
type Fleet struct {
	Clients []*Client
}

// NewFleet makes n clients, the i-th configured by cfg(i).
func NewFleet(n int, cfg func(i int) ClientConfig) *Fleet {
	f := &Fleet{Clients: make([]*Client, n)}
	for i := range n {
		f.Clients[i] = NewClient(cfg(i))
	}
	return f
}

// Run starts every client.
func (f *Fleet) Run(ctx context.Context) {
	for _, c := range f.Clients {
		c.Run(ctx)
	}
}

// Stop stops every client, concurrently, and waits for them.
func (f *Fleet) Stop() {
	var wg sync.WaitGroup
	for _, c := range f.Clients {
		wg.Go(c.Stop)
	}
	wg.Wait()
}

// WaitConnected waits until every client has an open stream.
func (f *Fleet) WaitConnected(within time.Duration) error {
	return poll(within, func() (bool, string) {
		n := 0
		for _, c := range f.Clients {
			if c.Stats().Connected {
				n++
			}
		}
		return n == len(f.Clients), fmt.Sprintf("%d of %d clients connected", n, len(f.Clients))
	})
}

// WaitCaughtUp waits until every client has received, on each of its topics, the id newest gives for that topic,
// and returns how long that took.
func (f *Fleet) WaitCaughtUp(newest map[string]hub.ID, within time.Duration) (time.Duration, error) {
	start := time.Now()
	err := poll(within, func() (bool, string) {
		behind := 0
		for _, c := range f.Clients {
			for _, t := range c.Topics() {
				if c.Last(t).Less(newest[t]) {
					behind++
					break
				}
			}
		}
		return behind == 0, fmt.Sprintf("%d of %d clients behind %v", behind, len(f.Clients), newest)
	})
	return time.Since(start), err
}

// Check compares every client's record with truth (per topic, stream order), all starting after after.
func (f *Fleet) Check(truth map[string][]hub.ID, after hub.ID) (Tally, []string) {
	var total Tally
	var bad []string
	for i, c := range f.Clients {
		if n := c.Stats().Malformed; n > 0 {
			total.Malformed += n
			if len(bad) < 5 {
				bad = append(bad, fmt.Sprintf("client %d: %d malformed frames", i, n))
			}
		}
		for _, t := range c.Topics() {
			got := c.Received(t)
			tl := Check(truth[t], after, got)
			total = total.Add(tl)
			if !tl.Clean() && len(bad) < 5 {
				bad = append(bad, fmt.Sprintf("client %d topic %s: %v; first missing %v", i, t, tl, Missing(truth[t], after, got, 5)))
			}
		}
	}
	return total, bad
}

// Reconnects is the number of streams opened beyond each client's first.
func (f *Fleet) Reconnects() int {
	n := 0
	for _, c := range f.Clients {
		n += max(c.Stats().Connects-1, 0)
	}
	return n
}

// Latency returns the 99th percentile and the maximum of the delivery latencies clients recorded (Measure).
func (f *Fleet) Latency(clients []*Client) (p99, worst time.Duration) {
	var all []uint16
	for _, c := range clients {
		all = append(all, c.Latencies()...)
	}
	if len(all) == 0 {
		return 0, 0
	}
	slices.Sort(all)
	ms := func(v uint16) time.Duration { return time.Duration(v) * time.Millisecond }
	return ms(all[len(all)*99/100]), ms(all[len(all)-1])
}

// poll is rig.PollWhy every 20ms for the suite, which waits on no context but its deadline.
func poll(within time.Duration, cond func() (bool, string)) error {
	return rig.PollWhy(context.Background(), within, 20*time.Millisecond, "waiting", cond)
}
