package bench

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/syncverse/hub/internal/delay"
	"github.com/syncverse/hub/pubsub"
)

// run is the whole scenario: start, open every stream, measure them idle, publish (with the faults under
// --chaos), then check every client against the streams and read what it all cost.
func (r *fleetRun) run(ctx context.Context) (*FleetResult, error) {
	o := r.o
	if err := r.start(ctx); err != nil {
		return nil, err
	}
	res := &FleetResult{Scenario: "fleet", Hubs: o.hubs, Loaders: o.loaders, Streams: o.conns, Topics: o.topics,
		Rate: o.rate, DurationS: o.duration.Seconds(), Chaos: o.chaos, Sharded: o.sharded, PayloadSize: o.payload,
		LoadBefore: loadAvg()}
	empty, emptyGo := r.hubSamples(), r.goMemory(ctx)
	began := time.Now()
	if err := r.openStreams(ctx); err != nil {
		return nil, err
	}
	res.ConnectAll = ms(time.Since(began))
	idleRedis := &redisMeter{}
	idleRedis.checkpoint(ctx, r.cluster)
	idleFrom := time.Now()
	if !delay.Sleep(ctx, o.hold) { // let the connect burst settle before reading memory
		return nil, ctx.Err()
	}
	idleRedis.checkpoint(ctx, r.cluster)
	idleRedisCPU := (idleRedis.masterCPU + idleRedis.replicaCPU) / time.Since(idleFrom).Seconds() * 100
	idle := r.idleHubs(ctx, res, empty, emptyGo)
	cpu := &hubCPU{base: ticksOf(idle), done: make([]int64, len(r.hubs)), from: time.Now()}
	loaders0 := append(r.loaderSamples(), must(readProc(0)))
	rm := &redisMeter{}
	rm.checkpoint(ctx, r.cluster)
	pubStart := time.Now()
	p := r.publishing()
	var pubs sync.WaitGroup
	pubs.Go(func() { p.run(ctx) })
	var once sync.Once
	stopPub := func() { once.Do(func() { close(p.stop); pubs.Wait() }) }
	defer stopPub()
	if o.chaos {
		res.Faults = r.chaos(ctx, pubStart, rm, cpu)
	}
	if !delay.Sleep(ctx, max(time.Until(pubStart.Add(o.duration)), 5*time.Second)) {
		return nil, ctx.Err()
	}
	stopPub()
	pubEnd := time.Now()
	truth, err := r.truth(ctx)
	if err != nil {
		return nil, err
	}
	results, err := r.verdicts(truth)
	if err != nil {
		return nil, r.loaderTrouble(err)
	}
	rm.checkpoint(ctx, r.cluster)
	end := r.hubSamples()
	res.LoadAfter = loadAvg()
	r.fill(res, results, truth, p, pubStart, pubEnd)
	r.fillCost(res, cpu, end, loaders0, rm)
	res.Redis.IdleCPUPercent = idleRedisCPU
	return res, nil
}

// idleHubs reads every hub's memory with all the streams open and nothing published, against empty (before any
// stream opened).
func (r *fleetRun) idleHubs(ctx context.Context, res *FleetResult, empty []sample, emptyGo [][3]float64) []sample {
	idle, idleGo, streams := r.hubSamples(), r.goMemory(ctx), r.streamsPerHub(ctx)
	for i := range r.hubs {
		per := func(d float64) float64 { return d / 1024 / float64(max(streams[i], 1)) }
		res.PerHub = append(res.PerHub, FleetHub{Addr: r.hubs[i].Addr, Streams: streams[i], RSSEmptyMiB: mib(empty[i].rss),
			RSSIdleMiB: mib(idle[i].rss), RSSPerStreamKiB: per(float64(idle[i].rss - empty[i].rss)),
			HeapPerStreamKiB: per(idleGo[i][0] - emptyGo[i][0]), StackPerStreamKiB: per(idleGo[i][1] - emptyGo[i][1]),
			GoroutinesIdle: int(idleGo[i][2])})
	}
	return idle
}

// goMemory reads each hub's Go heap and stacks in use and its goroutines from its /metrics.
func (r *fleetRun) goMemory(ctx context.Context) [][3]float64 {
	out := make([][3]float64, len(r.hubs))
	for i, h := range r.hubs {
		if m, err := h.Metrics(ctx); err == nil {
			out[i] = [3]float64{m["go_memstats_heap_inuse_bytes"], m["go_memstats_stack_inuse_bytes"], m["go_goroutines"]}
		}
	}
	return out
}

// must drops the error of a /proc reading: a process that is gone reads as zero.
func must(s sample, _ error) sample { return s }

// hubSamples reads /proc for every hub.
func (r *fleetRun) hubSamples() []sample {
	out := make([]sample, len(r.hubs))
	for i, h := range r.hubs {
		out[i], _ = readProc(h.Pid())
	}
	return out
}

func (r *fleetRun) loaderSamples() []sample {
	out := make([]sample, len(r.loaders))
	for i, l := range r.loaders {
		out[i], _ = readProc(l.cmd.Process.Pid)
	}
	return out
}

func ticksOf(s []sample) []int64 {
	out := make([]int64, len(s))
	for i, v := range s {
		out[i] = v.ticks
	}
	return out
}

// hubCPU adds up the hubs' CPU over the measured phase, across a restart: done holds what a hub process used
// before it ended, base the reading the current process is measured from.
type hubCPU struct {
	base, done []int64
	from       time.Time
}

// replaced records hub i's process ending (last, its final reading) and a new one starting from zero.
func (c *hubCPU) replaced(i int, last sample) {
	c.done[i] += last.ticks - c.base[i]
	c.base[i] = 0
}

// fill totals the loaders' verdicts and the deliveries.
func (r *fleetRun) fill(res *FleetResult, results []loaderResult, truth [][]string, p *fleetPublishing, pubStart, pubEnd time.Time) {
	var lat histogram
	var lastAt, openedAt int64
	for _, lr := range results {
		c := &res.Check
		c.Lost += lr.Tally.Lost
		c.Duplicated += lr.Tally.Duplicated
		c.Reordered += lr.Tally.Reordered
		c.Malformed += lr.Tally.Malformed
		c.Resets += lr.Tally.Resets
		c.Excused += lr.Tally.Excused
		c.DeliveredNotStored += lr.Tally.Unknown
		c.NeverOpened += lr.NeverOpened
		c.Behind += lr.Behind
		c.Reconnects += lr.Connects - (lr.Clients - lr.NeverOpened)
		c.Refused += lr.Refused
		c.Examples = append(c.Examples, lr.Bad...)
		res.Deliveries += lr.Deliveries
		res.Expected += lr.Tally.Expected
		lastAt, openedAt = max(lastAt, lr.LastAt), max(openedAt, lr.OpenedAt)
		merge(&lat, lr.Buckets, lr.MaxNs)
		for h, n := range lr.PerHub {
			if h < len(res.PerHub) {
				res.PerHub[h].StreamsEnd += n
			}
		}
	}
	res.Latency = lat.summary()
	res.LatencyOverTime = latencyOverTime(results, pubStart)
	stored := 0
	for _, ids := range truth {
		stored += len(ids)
	}
	res.Stored = stored
	res.Published, res.PublishFailed = p.counts()
	res.PublishErrors = p.errs
	res.Check.AckedNotStored = p.ackedNotStored(truth)
	res.PublishedPS = float64(res.Published) / pubEnd.Sub(pubStart).Seconds()
	if lastAt > 0 {
		res.DeliveriesPS = float64(res.Deliveries) / time.Unix(0, lastAt).Sub(pubStart).Seconds()
	}
	for _, f := range res.Faults {
		if f.Error != "" {
			res.Check.FaultsFailed++
		}
	}
}

// latencyOverTime merges the loaders' windows: latency by when events were sent, from the publishing's start.
func latencyOverTime(results []loaderResult, pubStart time.Time) []LatencyWindow {
	byWin := map[int64]*histogram{}
	for _, lr := range results {
		for _, w := range lr.Windows {
			if byWin[w.Window] == nil {
				byWin[w.Window] = &histogram{}
			}
			merge(byWin[w.Window], w.Buckets, w.MaxNs)
		}
	}
	var out []LatencyWindow
	for k, h := range byWin {
		at := time.Unix(0, k*int64(latWindow)).Sub(pubStart)
		out = append(out, LatencyWindow{FromS: at.Seconds(), Count: h.count.Load(), Latency: h.summary()})
	}
	slices.SortFunc(out, func(a, b LatencyWindow) int { return cmp.Compare(a.FromS, b.FromS) })
	return out
}

// fillCost reads what the run cost the hubs, the load generators and Redis.
func (r *fleetRun) fillCost(res *FleetResult, cpu *hubCPU, end, loaders0 []sample, rm *redisMeter) {
	var total int64
	for i := range r.hubs {
		t := cpu.done[i] + end[i].ticks - cpu.base[i]
		total += t
		res.PerHub[i].CPUSeconds = float64(t) / 100
		res.PerHub[i].RSSEndMiB = mib(end[i].rss)
		res.PerHub[i].Restarted = cpu.done[i] != 0
	}
	wall := max(end[0].at.Sub(cpu.from).Seconds(), 1)
	res.HubCPUPercent = float64(total) / 100 / wall * 100
	if res.Deliveries > 0 {
		res.HubCPUMicrosPerDelivery = float64(total) * 1e4 / float64(res.Deliveries)
	}
	var lt int64
	for i, s := range r.loaderSamples() {
		lt += s.ticks - loaders0[i].ticks
	}
	res.LoadGenCPUPercent = float64(lt) / 100 / wall * 100
	self := must(readProc(0))
	res.BenchCPUPercent = float64(self.ticks-loaders0[len(loaders0)-1].ticks) / 100 / wall * 100
	res.Redis = rm.result(res.Published)
}

// publishing is the fleet's publishers: pubs goroutines, each owning every pubs-th topic and publishing to its
// topics in turn at its share of the rate, in pipelined batches through the publish script.
func (r *fleetRun) publishing() *fleetPublishing {
	o := r.o
	return &fleetPublishing{pub: r.pub, topics: r.topics, pubs: min(o.publishers, len(r.topics)), rate: o.rate,
		payload: o.payload, batch: o.batch, meter: r.m, acked: make([][]string, len(r.topics)), stop: make(chan struct{})}
}

type fleetPublishing struct {
	pub     *pubsub.Publisher
	topics  []string
	pubs    int
	rate    float64
	payload int
	batch   int
	meter   *meter
	stop    chan struct{} // closed to end the publishing between two batches, so none is cut short

	acked  [][]string // per topic, the ids the script answered; each topic's written by its one publisher
	mu     sync.Mutex
	ok     int
	failed int
	errs   []string
}

func (p *fleetPublishing) run(ctx context.Context) {
	var wg sync.WaitGroup
	for k := range p.pubs {
		wg.Go(func() { p.one(ctx, k) })
	}
	wg.Wait()
}

func (p *fleetPublishing) one(ctx context.Context, k int) {
	var own []int
	for t := k; t < len(p.topics); t += p.pubs {
		own = append(own, t)
	}
	seq := make([]int, len(own))
	per := p.rate / float64(p.pubs)
	start, sent, next := time.Now(), 0, 0
	tick := time.NewTicker(pace)
	defer tick.Stop()
	msgs := make([]pubsub.Message, 0, p.batch)
	which := make([]int, 0, p.batch)
	for {
		due := int(per*time.Since(start).Seconds()) + 1
		if n := min(due-sent, p.batch); n > 0 {
			msgs, which = msgs[:0], which[:0]
			now := time.Now().UnixNano()
			for range n {
				j := next % len(own)
				next++
				msgs = append(msgs, pubsub.Message{Topic: p.topics[own[j]], Type: "progress", Data: payload(own[j], seq[j], now, p.payload)})
				which = append(which, own[j])
				seq[j]++
			}
			ids, errs := p.pub.PublishBatch(ctx, msgs)
			p.tally(which, ids, errs)
			sent += n
		}
		select {
		case <-ctx.Done():
			return
		case <-p.stop:
			return
		case <-tick.C:
		}
	}
}

func (p *fleetPublishing) tally(which []int, ids []string, errs []error) {
	ok, failed := 0, 0
	var first error
	for k, err := range errs {
		if err == nil {
			p.acked[which[k]] = append(p.acked[which[k]], ids[k])
			p.meter.published()
			ok++
		} else {
			failed++
			first = err
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ok += ok
	p.failed += failed
	if first != nil && len(p.errs) < 5 {
		p.errs = append(p.errs, first.Error())
	}
}

func (p *fleetPublishing) counts() (ok, failed int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ok, p.failed
}

// ackedNotStored counts ids the script answered that the stream does not hold at the end: events Redis lost
// (asynchronous replication, a master killed before its replica had them).
func (p *fleetPublishing) ackedNotStored(truth [][]string) int {
	n := 0
	for t, ids := range p.acked {
		have := make(map[string]bool, len(truth[t]))
		for _, id := range truth[t] {
			have[id] = true
		}
		for _, id := range ids {
			if !have[id] {
				n++
			}
		}
	}
	return n
}

// loadAvg is /proc/loadavg's first three figures.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return fmt.Sprintf("%s %s %s", f[0], f[1], f[2])
}
