package bench

import (
	"context"
	"flag"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/syncverse/hub/pubsub"
)

// topicsOptions are the topics scenario's own flags.
type topicsOptions struct {
	churn  float64       // topics per second gaining and then losing their only client
	settle time.Duration // wait after connecting, before the idle window: the checks new subscriptions get
}

func topicsFlags(fs *flag.FlagSet, o *options) {
	fs.Float64Var(&o.tp.churn, "churn", 200, "topics: topics per second that gain a client and lose it again while events flow")
	fs.DurationVar(&o.tp.settle, "settle", 11*time.Second, "topics: wait after connecting before the idle window (two tail checks)")
}

// topicsDefaults sets the scenario's figures where the command line gives none: 10,000 clients on 5,000 topics,
// 4,000 events/s, an idle window of 20 s.
func topicsDefaults(o *options, set map[string]bool) {
	setDefault(set, "conns", &o.conns, 10000)
	setDefault(set, "rate", &o.rate, 4000)
	setDefault(set, "hold", &o.hold, 20*time.Second)
	setDefault(set, "dial-concurrency", &o.dialConc, 512)
	setDefault(set, "topics", &o.topics, max(1, o.conns/2))
}

// topicsRun is one run of the topics scenario: a load per topic, so each client checks its own topic's events.
type topicsRun struct {
	b      *benchRun
	names  []string
	loads  []*load
	ok     [][]bool // per topic, per sequence: whether the script stored it
	perTop int      // events per topic
	lat    histogram
}

// topics: --conns clients over --topics topics, each resuming after its topic's anchor; an idle window, then
// --rate events/s spread over every topic for --duration while --churn topics a second gain and lose a client.
// Every client checks every event of its topic. Redis commands are read from INFO commandstats around each phase.
func topics(ctx context.Context, b *benchRun) (*Result, error) {
	o := b.o
	r := &topicsRun{b: b, perTop: max(1, o.events/o.topics)}
	for i := range o.topics {
		r.names = append(r.names, o.topic+"."+strconv.Itoa(i))
	}
	anchors, err := r.publishAnchors(ctx, r.names)
	if err != nil {
		return nil, err
	}
	dialing := make(chan struct{}, o.dialConc)
	for i, name := range r.names {
		l := b.load(name, anchors[i], 1, r.perTop, r.perTop)
		l.lat, l.dialing = &r.lat, dialing
		r.loads = append(r.loads, l)
	}
	res := &Result{Scenario: "topics", Target: o.target, Conns: o.conns, Events: r.perTop * len(r.names), Rate: o.rate, PayloadSize: o.payload}
	tr := &TopicsReport{Topics: len(r.names), EventsPerTopic: r.perTop, ChurnAsked: o.tp.churn}
	res.Topics = tr
	cl, err := r.connect(ctx, res)
	if err != nil {
		return nil, err
	}
	defer cl.stop()
	select {
	case <-time.After(o.tp.settle):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if tr.Idle, err = r.idlePhase(ctx); err != nil {
		return nil, err
	}
	if held, err := readProc(r.b.t.pid); err == nil && res.Proc != nil { // what the streams hold once idle
		res.Proc.RSSHeldPerConnKiB = (mib(held.rss) - res.Proc.RSSBeforeMiB) * 1024 / float64(o.conns)
	}
	ch, err := r.loadPhase(ctx, res)
	if err != nil {
		return nil, err
	}
	r.results(res, cl, ch)
	return res, nil
}

// publishAnchors publishes one event on each topic, in pipelines, and returns their ids.
func (r *topicsRun) publishAnchors(ctx context.Context, names []string) ([]string, error) {
	ids := make([]string, 0, len(names))
	for i := 0; i < len(names); i += r.b.o.batch {
		var msgs []pubsub.Message
		for _, n := range names[i:min(i+r.b.o.batch, len(names))] {
			msgs = append(msgs, pubsub.Message{Topic: n, Type: "progress", Data: []byte(`{"anchor":true}`)})
		}
		got, errs := r.b.pub.PublishBatch(ctx, msgs)
		for _, err := range errs {
			if err != nil {
				return nil, fmt.Errorf("publish the anchor events: %w", err)
			}
		}
		ids = append(ids, got...)
	}
	return ids, nil
}

// topicsClients are the scenario's clients, client i on topic i mod topics.
type topicsClients struct {
	clients []*client
	topic   []int // topic index of each client
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

func (c *topicsClients) stop() {
	c.cancel()
	c.wg.Wait()
}

// connect opens every client, at most --dial-concurrency at once, and waits until the hub counts them open.
func (r *topicsRun) connect(ctx context.Context, res *Result) (*topicsClients, error) {
	o := r.b.o
	m0, _ := r.b.t.metrics(openedStreams)
	before, _ := readProc(r.b.t.pid)
	cctx, cancel := context.WithCancel(ctx)
	cl := &topicsClients{cancel: cancel, clients: make([]*client, o.conns), topic: make([]int, o.conns)}
	d := &net.Dialer{Timeout: 10 * time.Second}
	began := time.Now()
	for i := range o.conns {
		l := r.loads[i%len(r.loads)]
		l.opened.Add(1)
		l.done.Add(1)
		select {
		case l.dialing <- struct{}{}: // released by the client once it is open
		case <-ctx.Done():
			l.opened.Done()
			l.done.Done()
			cl.stop()
			return nil, ctx.Err()
		}
		c := newClient(l)
		c.start = began
		cl.clients[i], cl.topic[i] = c, i%len(r.loads)
		cl.wg.Go(func() {
			if err := c.stream(cctx, d); err != nil && cctx.Err() == nil {
				c.err = err
			}
		})
	}
	if !waitLoads(r.loads, func(l *load) *sync.WaitGroup { return &l.opened }, 2*time.Minute) {
		cl.stop()
		return nil, fmt.Errorf("connections still opening after 2m")
	}
	for _, c := range cl.clients {
		if c.opened.IsZero() { // set before the client's opened.Done; its err is only safe to read once it ended
			cl.stop()
			return nil, fmt.Errorf("connect: %w", c.err)
		}
	}
	if err := r.b.t.waitOpened(ctx, int(m0[openedStreams])+o.conns, time.Minute); err != nil {
		cl.stop()
		return nil, err
	}
	var last time.Time
	for _, c := range cl.clients {
		last = maxTime(last, c.opened)
	}
	res.ConnectAll = ms(last.Sub(began))
	after, _ := readProc(r.b.t.pid)
	res.Proc = &Proc{RSSBeforeMiB: mib(before.rss), RSSAfterMiB: mib(after.rss),
		RSSPerConnKiB: float64(after.rss-before.rss) / float64(o.conns) / 1024}
	return cl, nil
}

// waitLoads waits for one WaitGroup of every load, within one deadline for all.
func waitLoads(loads []*load, wg func(*load) *sync.WaitGroup, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for _, l := range loads {
		if !wait(wg(l), time.Until(deadline)) {
			return false
		}
	}
	return true
}

// idlePhase holds the followed topics without events for --hold and reads what the hub costs meanwhile.
func (r *topicsRun) idlePhase(ctx context.Context) (*RedisPhase, error) {
	var ph *RedisPhase
	var err error
	h0, _ := readProc(r.b.t.pid)
	ph, err = r.measureRedis(ctx, func() {
		select {
		case <-time.After(r.b.o.hold):
		case <-ctx.Done():
		}
	})
	h1, _ := readProc(r.b.t.pid)
	if ph != nil {
		ph.HubCPUPercent = cpuPercent(h0, h1)
		ph.PerTopicMinute = ph.SubscriberPS * 60 / float64(len(r.names))
		ph.OtherPerTopic = ph.OtherPS * 60 / float64(len(r.names))
	}
	return ph, err
}

// loadPhase publishes, runs the churn beside it, and waits for the deliveries.
func (r *topicsRun) loadPhase(ctx context.Context, res *Result) (*topicsChurn, error) {
	o := r.b.o
	p := &topicsPublishing{r: r}
	ch := newTopicsChurn(r, o.tp.churn)
	if err := ch.prepare(ctx); err != nil {
		return nil, err
	}
	var err error
	res.Topics.Load, err = r.measureRedis(ctx, func() {
		r.b.measureCPU(res, func() {
			ch.start(ctx)
			p.run(ctx)
			waitLoads(r.loads, func(l *load) *sync.WaitGroup { return &l.done }, o.drain)
			ch.stop()
		})
	})
	if err != nil {
		return nil, err
	}
	if err := p.err(); err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	r.ok = p.ok
	res.Published = p.published()
	res.PublishedPS = float64(res.Published) / p.lastSent.Sub(p.firstSent).Seconds()
	res.Topics.publishedAt = p.firstSent
	return ch, nil
}
