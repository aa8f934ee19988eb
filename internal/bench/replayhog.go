package bench

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"sync"
	"time"

	"github.com/syncverse/hub/pubsub"
)

// replayHog: --conns clients resume a topic of --replay events of --payload bytes from early positions (client i
// after the topic's i-th event, so no two ask for the same range) and never read, while one more client resumes from
// the start and reads everything. It reports the hub's RSS before and its peak while the hogs hold their streams,
// and checks that the reader got every event.
func replayHog(ctx context.Context, b *benchRun) (*Result, error) {
	o := b.o
	anchor, p, err := b.prefill(ctx, o.topic, o.replay)
	if err != nil {
		return nil, err
	}
	key := pubsub.Keys{Prefix: o.prefix}.Stream(o.topic)
	if n, err := b.rdb.XLen(ctx, key).Result(); err != nil || n != int64(p.published())+1 {
		return nil, fmt.Errorf("the topic holds %d entries (%v), want the anchor and %d events: a publish was sent twice", n, err, p.published())
	}
	starts, err := b.rdb.XRangeN(ctx, key, "-", "+", int64(o.conns)).Result()
	if err != nil {
		return nil, fmt.Errorf("read the hogs' positions: %w", err)
	}
	res := &Result{Scenario: "replay-hog", Conns: o.conns, Replayed: p.published(), PayloadSize: o.payload}
	before, err := readProc(b.t.pid)
	if err != nil {
		return nil, fmt.Errorf("read the hub's RSS (give --pid, or --hub-bin): %w", err)
	}
	hogs := make([]net.Conn, 0, len(starts))
	defer func() {
		for _, c := range hogs {
			_ = c.Close()
		}
	}()
	for _, m := range starts {
		c, err := b.hog(m.ID)
		if err != nil {
			return nil, fmt.Errorf("connect a hog: %w", err)
		}
		hogs = append(hogs, c)
	}
	l := b.load(o.topic, anchor, p.pubs, p.perPub, p.published())
	var f *fleet
	peak := before.rss
	b.measureCPU(res, func() {
		f = b.open(ctx, l, 1)
		peak = max(peak, b.peakRSS(ctx, &l.done, o.hold, o.drain))
	})
	defer f.stop()
	res.Proc.RSSBeforeMiB, res.Proc.RSSAfterMiB = mib(before.rss), mib(peak)
	res.Check = f.check(p.ok)
	if c := f.clients[0]; c != nil && !c.last.IsZero() {
		res.LastReplayed = ms(c.last.Sub(c.start))
	}
	return res, nil
}

// hog opens a stream resuming after id and never reads from it. Its receive buffer is kept small, so what the hub
// cannot write stays in the hub.
func (b *benchRun) hog(id string) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", b.t.hostPort(), 10*time.Second)
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4 << 10)
	}
	req := "GET /events?topic=" + url.QueryEscape(b.o.topic) + " HTTP/1.1\r\nHost: " + b.t.hostPort() +
		"\r\nAccept: text/event-stream\r\nLast-Event-ID: " + id + "\r\n\r\n"
	if _, err := c.Write([]byte(req)); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// peakRSS samples the hub's RSS every 50 ms until the reader is done (or drain has passed) and the hogs have been
// held for hold, and returns the largest sample.
func (b *benchRun) peakRSS(ctx context.Context, done *sync.WaitGroup, hold, drain time.Duration) int64 {
	finished := make(chan struct{})
	go func() { done.Wait(); close(finished) }() // ends when the reader is done or gives up (the fleet's stop)
	var peak int64
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	held, giveUp := time.After(hold), time.After(hold+drain)
	for read, waited := false, false; !read || !waited; {
		if s, err := readProc(b.t.pid); err == nil {
			peak = max(peak, s.rss)
		}
		select {
		case <-finished:
			read, finished = true, nil
		case <-held:
			waited = true
		case <-giveUp:
			return peak
		case <-ctx.Done():
			return peak
		case <-tick.C:
		}
	}
	return peak
}

// hogDefaults sets the figures of issue #14's attack where the command line gives none: 16 hogs, 1,000 events of
// 60 KB, held for 8 s.
func hogDefaults(o *options, set map[string]bool) {
	setDefault(set, "conns", &o.conns, 16)
	setDefault(set, "payload", &o.payload, 60<<10)
	setDefault(set, "hold", &o.hold, 8*time.Second)
	// Pipelines of 15 MB time out on a busy machine, and go-redis sends a timed-out pipeline again.
	setDefault(set, "batch", &o.batch, 8)
}
