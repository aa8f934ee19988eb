package bench

import (
	"context"
	"net"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// topicsChurn makes topics gain and lose their only client while the main load runs. A cycle takes a churn topic
// nobody follows, publishes an event on it, opens a client that resumes after the topic's last event, publishes a
// second event once the stream is open, waits until the client has both (the first replayed, the second live or
// replayed: whichever way, exactly once and in order) and closes it. Each cycle is a Follow and an Unfollow at the
// hub: a SUBSCRIBE, a baseline read, an UNSUBSCRIBE.
type topicsChurn struct {
	r     *topicsRun
	rate  float64
	names []string
	last  []string // per churn topic, the id the next cycle resumes after; owned by the cycle holding busy

	mu      sync.Mutex
	busy    []bool
	cycles  int
	failed  int
	skipped int
	check   Check
	each    histogram

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newTopicsChurn(r *topicsRun, rate float64) *topicsChurn {
	n := 0
	if rate > 0 {
		n = max(50, int(2*rate)) // a topic comes round again after about 2 s: long after its client left
	}
	c := &topicsChurn{r: r, rate: rate, busy: make([]bool, n)}
	for i := range n {
		c.names = append(c.names, r.b.o.topic+".churn."+strconv.Itoa(i))
	}
	return c
}

// prepare publishes each churn topic's anchor, so the first cycle of each has a position to resume after.
func (c *topicsChurn) prepare(ctx context.Context) error {
	ids, err := c.r.publishAnchors(ctx, c.names)
	c.last = ids
	return err
}

// start begins the cycles; stop ends them and waits for every one.
func (c *topicsChurn) start(ctx context.Context) {
	ctx, c.cancel = context.WithCancel(ctx)
	if c.rate <= 0 {
		return
	}
	c.wg.Go(func() { c.loop(ctx) })
}

func (c *topicsChurn) stop() {
	if c.cancel != nil {
		c.cancel()
	}
	c.wg.Wait()
}

func (c *topicsChurn) loop(ctx context.Context) {
	tick := time.NewTicker(pace)
	defer tick.Stop()
	began, started, next := time.Now(), 0, 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for due := int(c.rate * time.Since(began).Seconds()); started < due; started++ {
			i := next
			next = (next + 1) % len(c.names)
			c.mu.Lock()
			free := !c.busy[i]
			if free {
				c.busy[i] = true
			} else {
				c.skipped++
			}
			c.mu.Unlock()
			if free {
				c.wg.Go(func() { c.cycle(ctx, i) })
			}
		}
	}
}

// cycle is one gain and loss of topic i's only client.
func (c *topicsChurn) cycle(ctx context.Context, i int) {
	o := c.r.b.o
	l := &load{host: c.r.b.t.hostPort(), path: "/events?topic=" + url.QueryEscape(c.names[i]), lastEventID: c.last[i],
		pubs: 1, perPub: 2, want: 2}
	ok := make([]bool, 2)
	ids := make([]string, 2)
	publish := func(s int) {
		id, err := c.r.b.pub.Publish(ctx, c.names[i], "progress", progressPayload(0, s, time.Now().UnixNano(), o.payload))
		ok[s], ids[s] = err == nil, id
	}
	publish(0)
	l.opened.Add(1)
	l.done.Add(1)
	cctx, cancel := context.WithCancel(ctx)
	cl := newClient(l)
	cl.start = time.Now()
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := cl.stream(cctx, &net.Dialer{Timeout: 10 * time.Second}); err != nil && cctx.Err() == nil {
			cl.err = err
		}
	})
	opened := wait(&l.opened, 10*time.Second)
	if opened {
		publish(1)
	}
	if opened {
		wait(&l.done, o.drain)
	}
	cancel()
	wg.Wait()
	done := cl.received >= l.want // safe to read: the client's goroutine has ended
	if ctx.Err() != nil && !done {
		c.release(i, nil) // the run ended under it: neither a success nor a failure
		return
	}
	for s := 1; s >= 0; s-- {
		if ok[s] {
			c.last[i] = ids[s]
			break
		}
	}
	c.release(i, func() {
		c.cycles++
		if !done || cl.err != nil || cl.opened.IsZero() {
			c.failed++
		}
		c.check.Duplicated += cl.dups
		c.check.OutOfOrder += cl.disorder
		c.check.Resets += cl.resets
		c.check.Lost += cl.lost(ok)
		if done {
			c.each.add(int64(cl.last.Sub(cl.start)))
		}
	})
}

func (c *topicsChurn) release(i int, record func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.busy[i] = false
	if record != nil {
		record()
	}
}

// report is the churn's part of the result, read after stop.
func (c *topicsChurn) report() *ChurnReport {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rate <= 0 {
		return nil
	}
	chk := c.check
	chk.Failed = c.failed
	each := c.each.summary()
	return &ChurnReport{Asked: c.rate, Topics: len(c.names), Cycles: c.cycles, Skipped: c.skipped, Check: chk, Each: &each}
}
