package bench

import (
	"context"
	"fmt"
	"time"
)

// fanout: N clients on one topic, M events at rate R; every delivery checked, latency from the send time each
// event carries.
func fanout(ctx context.Context, b *benchRun) (*Result, error) {
	o := b.o
	anchor, err := b.anchor(ctx, o.topic)
	if err != nil {
		return nil, err
	}
	p := b.publishing(o.topic, o.events, o.rate)
	l := b.load(o.topic, anchor, p.pubs, p.perPub, p.pubs*p.perPub)
	l.lat = &histogram{}
	res := &Result{Scenario: "fanout", Conns: o.conns, Events: p.pubs * p.perPub, Rate: o.rate, PayloadSize: o.payload}
	f, err := b.connect(ctx, l, o.conns, res)
	if err != nil {
		return nil, err
	}
	defer f.stop()
	b.measureCPU(res, func() {
		p.run(ctx)
		wait(&l.done, o.drain)
	})
	if err := p.err(); err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	res.Published = p.published()
	var last time.Time
	for _, c := range f.clients {
		res.Deliveries += c.received
		last = maxTime(last, c.last)
	}
	if last.IsZero() {
		last = time.Now()
	}
	res.DeliveriesPS = float64(res.Deliveries) / last.Sub(p.firstSent).Seconds()
	res.PublishedPS = float64(res.Published) / p.lastSent.Sub(p.firstSent).Seconds()
	s := l.lat.summary()
	res.Latency = &s
	res.Check = f.check(p.ok)
	return res, nil
}

// idle: N clients and no events for --hold: memory per connection, idle CPU, heartbeats.
func idle(ctx context.Context, b *benchRun) (*Result, error) {
	o := b.o
	anchor, err := b.anchor(ctx, o.topic)
	if err != nil {
		return nil, err
	}
	l := b.load(o.topic, anchor, 1, 0, 0)
	res := &Result{Scenario: "idle", Conns: o.conns}
	f, err := b.connect(ctx, l, o.conns, res)
	if err != nil {
		return nil, err
	}
	defer f.stop()
	beats0 := l.beats.Load()
	b.measureCPU(res, func() {
		select {
		case <-time.After(o.hold):
		case <-ctx.Done():
		}
	})
	res.Heartbeats = l.beats.Load() - beats0
	if end, err := readProc(b.t.pid); err == nil && res.Proc != nil {
		res.Proc.RSSHeldPerConnKiB = (mib(end.rss) - res.Proc.RSSBeforeMiB) * 1024 / float64(o.conns)
	}
	res.Check = f.check(nil)
	return res, nil
}

// replay: a client that missed K events reconnects with Last-Event-ID; time to its first and last replayed event,
// median of --repeat runs, each on a fresh topic.
func replay(ctx context.Context, b *benchRun) (*Result, error) {
	o := b.o
	name := "replay (warm topic)"
	if o.cold {
		name = "replay (cold topic)"
	}
	res := &Result{Scenario: name, Conns: 1, Replayed: o.replay, PayloadSize: o.payload}
	var firsts, lasts []time.Duration
	for r := range o.repeat {
		topic := fmt.Sprintf("%s.%d", o.topic, r)
		anchor, p, err := b.prefill(ctx, topic, o.replay)
		if err != nil {
			return nil, err
		}
		var watcher *fleet
		if !o.cold { // a console watching the topic keeps it followed, as on any busy hub
			wl := b.load(topic, "", 1, 0, 0)
			watcher = b.open(ctx, wl, 1)
			wait(&wl.opened, o.drain)
			if err := watcher.firstError(); err != nil {
				watcher.stop()
				return nil, fmt.Errorf("connect the watcher: %w", err)
			}
		}
		l := b.load(topic, anchor, p.pubs, p.perPub, p.published())
		f := b.open(ctx, l, 1)
		finished := wait(&l.done, o.drain)
		f.stop()
		if watcher != nil {
			watcher.stop()
		}
		c := f.clients[0]
		chk := f.check(p.ok)
		if !finished || !chk.ok() {
			res.Check = chk
			return res, nil
		}
		firsts = append(firsts, c.first.Sub(c.start))
		lasts = append(lasts, c.last.Sub(c.start))
	}
	res.FirstReplayed, res.LastReplayed = medianMs(firsts), medianMs(lasts)
	return res, nil
}

// storm: N clients reconnect at once, each having missed the same K events; time until every one has them all.
func storm(ctx context.Context, b *benchRun) (*Result, error) {
	o := b.o
	anchor, p, err := b.prefill(ctx, o.topic, o.replay)
	if err != nil {
		return nil, err
	}
	l := b.load(o.topic, anchor, p.pubs, p.perPub, p.published())
	res := &Result{Scenario: "storm", Conns: o.conns, Replayed: p.published(), PayloadSize: o.payload}
	var f *fleet
	began := time.Now()
	b.measureCPU(res, func() {
		f = b.open(ctx, l, o.conns)
		wait(&l.done, o.drain+time.Duration(o.conns)*time.Millisecond)
	})
	defer f.stop()
	allDone, eachDone := f.spread(began, func(c *client) time.Time { return c.last })
	res.EachDone, res.AllDone = eachDone, allDone
	res.ConnectAll, res.ConnectEach = f.connectTimes(began)
	res.Check = f.check(p.ok)
	return res, nil
}

// publishOnly: the publishers alone, as fast as Redis takes pipelined script calls.
func publishOnly(ctx context.Context, b *benchRun) (*Result, error) {
	o := b.o
	p := b.publishing(o.topic, o.events, o.rate)
	res := &Result{Scenario: "publish", Events: p.pubs * p.perPub, Rate: o.rate, PayloadSize: o.payload}
	b.measureCPU(res, func() { p.run(ctx) })
	if err := p.err(); err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	res.Published = p.published()
	res.PublishedPS = float64(res.Published) / p.lastSent.Sub(p.firstSent).Seconds()
	if res.Published != res.Events {
		res.Check.Lost = res.Events - res.Published
	}
	return res, nil
}
