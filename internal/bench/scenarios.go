package bench

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/pubsub"
)

// benchRun is one scenario against one target.
type benchRun struct {
	o   *options
	t   *target
	pub *pubsub.Publisher
	rdb *redis.Client
	m   *meter
}

// fleet is a set of clients streaming under one context; stop ends them and waits for their goroutines.
type fleet struct {
	clients []*client
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// open starts n clients of l, at most dialConc connecting at once. It returns at once; l.opened tells when all are
// open (or failed).
func (b *benchRun) open(ctx context.Context, l *load, n int) *fleet {
	ctx, cancel := context.WithCancel(ctx)
	f := &fleet{cancel: cancel, clients: make([]*client, n)}
	l.opened.Add(n)
	l.done.Add(n)
	l.dialing = make(chan struct{}, b.o.dialConc)
	d := &net.Dialer{Timeout: 10 * time.Second}
	f.wg.Go(func() {
		for i := range n {
			select {
			case l.dialing <- struct{}{}:
			case <-ctx.Done():
				for range n - i { // never started: count them as failed so waits end
					l.opened.Done()
					l.done.Done()
				}
				return
			}
			c := newClient(l)
			f.clients[i] = c
			c.start = time.Now()
			f.wg.Go(func() {
				if err := c.stream(ctx, d); err != nil && ctx.Err() == nil {
					c.err = err
				}
			})
		}
	})
	return f
}

func (f *fleet) stop() {
	f.cancel()
	f.wg.Wait()
}

// check totals the verdict of every client against the events published (nil ok: none were).
func (f *fleet) check(ok []bool) Check {
	var c Check
	for _, cl := range f.clients {
		if cl == nil {
			c.Failed++
			continue
		}
		if cl.err != nil || cl.opened.IsZero() {
			c.Failed++
		}
		c.Duplicated += cl.dups
		c.OutOfOrder += cl.disorder
		c.Resets += cl.resets
		if ok != nil {
			c.Lost += cl.lost(ok)
		}
	}
	return c
}

func (f *fleet) firstError() error {
	for _, c := range f.clients {
		if c != nil && c.err != nil {
			return c.err
		}
	}
	return nil
}

// connectTimes returns how long the fleet took to open and each client's time to open.
func (f *fleet) connectTimes(began time.Time) (Millis, *Latency) {
	return f.spread(began, func(c *client) time.Time { return c.opened })
}

// spread returns how long after began the last client reached the moment at gives, and each client's time from its
// start to that moment; clients that never reached it are left out.
func (f *fleet) spread(began time.Time, at func(*client) time.Time) (Millis, *Latency) {
	var h histogram
	var last time.Time
	for _, c := range f.clients {
		if c == nil || at(c).IsZero() {
			continue
		}
		h.add(int64(at(c).Sub(c.start)))
		last = maxTime(last, at(c))
	}
	s := h.summary()
	return ms(last.Sub(began)), &s
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func wait(wg *sync.WaitGroup, within time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(within):
		return false
	}
}

func (b *benchRun) load(topic, lastID string, pubs, perPub, want int) *load {
	return &load{host: b.t.hostPort(), path: "/events?topic=" + url.QueryEscape(topic), lastEventID: lastID,
		pubs: pubs, perPub: perPub, want: want, meter: b.m}
}

// anchor publishes the event every client resumes after, so none can miss the first one measured.
func (b *benchRun) anchor(ctx context.Context, topic string) (string, error) {
	id, err := b.pub.Publish(ctx, topic, "progress", []byte(`{"anchor":true}`))
	if err != nil {
		return "", fmt.Errorf("publish the anchor event: %w", err)
	}
	return id, nil
}

// connect opens n clients of l, waits until they and the hub agree they are open, and measures the hub around it.
func (b *benchRun) connect(ctx context.Context, l *load, n int, res *Result) (*fleet, error) {
	m0, _ := b.t.metrics(openedStreams, "go_memstats_heap_inuse_bytes", "go_memstats_stack_inuse_bytes")
	before, _ := readProc(b.t.pid)
	began := time.Now()
	f := b.open(ctx, l, n)
	if !wait(&l.opened, 2*time.Minute) {
		f.stop()
		return nil, fmt.Errorf("connections still opening after 2m")
	}
	if err := f.firstError(); err != nil {
		f.stop()
		return nil, fmt.Errorf("connect: %w", err)
	}
	if err := b.t.waitOpened(ctx, int(m0[openedStreams])+n, time.Minute); err != nil {
		f.stop()
		return nil, err
	}
	res.ConnectAll, res.ConnectEach = f.connectTimes(began)
	time.Sleep(time.Second) // let the handlers reach their steady state before reading memory
	after, _ := readProc(b.t.pid)
	m1, _ := b.t.metrics("go_memstats_heap_inuse_bytes", "go_memstats_stack_inuse_bytes")
	kib := func(d float64) float64 { return d / float64(n) / 1024 }
	res.Proc = &Proc{
		RSSBeforeMiB: mib(before.rss), RSSAfterMiB: mib(after.rss), RSSPerConnKiB: kib(float64(after.rss - before.rss)),
		HeapPerConnKB: kib(m1["go_memstats_heap_inuse_bytes"] - m0["go_memstats_heap_inuse_bytes"]),
		StackPerConnK: kib(m1["go_memstats_stack_inuse_bytes"] - m0["go_memstats_stack_inuse_bytes"]),
	}
	return f, nil
}

// measureCPU runs fn and records the hub's and the bench's CPU over it.
func (b *benchRun) measureCPU(res *Result, fn func()) {
	h0, _ := readProc(b.t.pid)
	s0, _ := readProc(0)
	fn()
	h1, _ := readProc(b.t.pid)
	s1, _ := readProc(0)
	if res.Proc == nil {
		res.Proc = &Proc{}
	}
	res.Proc.CPUPercent, res.Proc.BenchCPU = cpuPercent(h0, h1), cpuPercent(s0, s1)
	res.Proc.Writes = h1.writes - h0.writes
	res.Proc.CPUSeconds = float64(h1.ticks-h0.ticks) / 100
}

// prefill publishes the anchor event of topic and then n events, all before any client connects.
func (b *benchRun) prefill(ctx context.Context, topic string, n int) (string, *publishing, error) {
	anchor, err := b.anchor(ctx, topic)
	if err != nil {
		return "", nil, err
	}
	p := b.publishing(topic, n, 0)
	p.run(ctx)
	if err := p.err(); err != nil {
		return "", nil, fmt.Errorf("publish: %w", err)
	}
	return anchor, p, nil
}

func (b *benchRun) publishing(topic string, events int, rate float64) *publishing {
	pubs := min(b.o.publishers, events)
	return &publishing{pub: b.pub, topic: topic, pubs: pubs, perPub: (events + pubs - 1) / pubs, rate: rate,
		payload: b.o.payload, batch: b.o.batch, meter: b.m}
}
