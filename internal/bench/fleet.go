package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/pubsub"
)

// The fleet scenario: several hub processes on one Redis Cluster, streams spread over them from several
// load-generator processes (the hub binary again, see fleet_loader.go), events on many topics, and with --chaos a
// cluster failover, a master kill, a slot migration and a rolling restart of one hub while it runs.

// fleetStreamsPerLoader is how many streams one load generator opens by default: well under what one process may
// hold here (RLIMIT_NOFILE 20,000), as a hub restarted during the run moves some clients around.
const fleetStreamsPerLoader = 15000

// fleetDefaults fills in what the fleet scenario's flags left unset.
func fleetDefaults(o *options, set map[string]bool) {
	setDefault(set, "conns", &o.conns, 100000)
	setDefault(set, "duration", &o.duration, 60*time.Second)
	// What this 2-core machine sustains at 100,000 streams without faults (BENCHMARKS.md, "The fleet").
	setDefault(set, "rate", &o.rate, 500)
	setDefault(set, "drain", &o.drain, 60*time.Second)
	// How long the open streams settle before their memory is read.
	setDefault(set, "hold", &o.hold, 10*time.Second)
	if o.loaders <= 0 {
		o.loaders = max(2, (o.conns+fleetStreamsPerLoader-1)/fleetStreamsPerLoader)
	}
	if o.hubs <= 0 {
		o.hubs = fleetHubsFor(o.conns, noFileLimit())
	}
	// 256 connects at once over all the loaders: a larger burst leaves the hubs more garbage, and the pages it took
	// stay in their RSS (28,000 streams on 280 topics: 10-11 KiB per idle stream with 512 at once, 6.7-7.2 with 128,
	// and all open sooner).
	setDefault(set, "dial-concurrency", &o.dialConc, max(16, 256/o.loaders))
	o.events = int(o.rate * o.duration.Seconds())
}

// fleetHubsFor is the default number of hubs: 5, or more when the streams would not fit, since one process holds
// at most limit sockets (less some for Redis and the listener) and a hub restarted under --chaos hands its streams
// to the others.
func fleetHubsFor(conns int, limit uint64) int {
	room := int(limit) - 1000
	for n := 5; n < 1000; n++ {
		if room > 0 && (conns+n-2)/(n-1) <= room {
			return n
		}
	}
	return 1000
}

// noFileLimit is RLIMIT_NOFILE's hard limit: what this process and its children may raise theirs to.
func noFileLimit() uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 1024
	}
	return lim.Max
}

// fleetCheck validates the fleet's options; the problems are reported with the others.
func fleetCheck(o *options) []string {
	var bad []string
	if o.hubs < 2 || o.topics < 1 || o.loaders < 1 {
		bad = append(bad, "--hubs must be at least 2, --topics and --loaders at least 1")
	}
	if o.url != "" {
		bad = append(bad, "--url names one hub; the fleet starts its own (--hub-bin, default this binary)")
	}
	if o.rate <= 0 {
		bad = append(bad, "the fleet publishes at a pace: --rate must be positive")
	}
	return bad
}

// fleetCommand runs the fleet scenario, or one of its load generators.
func fleetCommand(ctx context.Context, o *options, stdout, stderr io.Writer, tty bool) error {
	if o.scenario == fleetLoader {
		return runLoader(ctx, os.Stdin, stdout)
	}
	if err := raiseNoFile(int(noFileLimit()) - 4096); err != nil {
		return err
	}
	// The faults make go-redis log every refused dial of the publishers' client; the run counts failed publishes
	// instead. This process is the bench's own, so its logger is too.
	redis.SetLogger(quietLog{})
	r := &fleetRun{o: o, m: &meter{}}
	defer r.stop()
	return report(o, r.m, stdout, stderr, tty, func() (outcome, error) { return r.run(ctx) })
}

// fleetRun is one run of the fleet scenario and everything it started; stop ends all of it.
type fleetRun struct {
	o         *options
	m         *meter
	bin       string // the hub binary (--hub-bin)
	loaderBin string // the load generators' binary: hub-bench (--bench-bin, default this one)
	cluster   *redisCluster
	rdb       redis.UniversalClient
	pub       *pubsub.Publisher
	keys      pubsub.Keys
	env       []string
	hubs      []*rig.Hub
	gone      []sample // the last reading of hub processes that ended during the run (the rolling restart)
	loaders   []*loaderProc
	topics    []string
	anchors   []string
}

func (r *fleetRun) stop() {
	for _, l := range r.loaders {
		l.stop()
	}
	for _, h := range r.hubs {
		_ = h.Stop()
	}
	if r.rdb != nil {
		_ = r.rdb.Close()
	}
	if r.cluster != nil {
		r.cluster.stop()
	}
}

// start brings up the cluster (or joins --redis-url's), the hubs and the topics' anchors.
func (r *fleetRun) start(ctx context.Context) error {
	o := r.o
	var err error
	r.bin = o.hubBin
	if r.loaderBin = o.benchBin; r.loaderBin == "" {
		if r.loaderBin, err = os.Executable(); err != nil {
			return err
		}
	}
	if o.redisURL == "" {
		r.cluster, err = startCluster(3, 1)
	} else {
		r.cluster, err = joinCluster(ctx, o.redisURL)
	}
	if err != nil {
		return err
	}
	prefix := fmt.Sprintf("%s%d", o.prefix, time.Now().UnixNano()) // a run of its own, even on a cluster used before
	r.keys = pubsub.Keys{Prefix: prefix}
	if r.rdb, err = pubsub.NewClient(r.cluster.url); err != nil {
		return err
	}
	r.pub = pubsub.NewPublisher(r.rdb, pubsub.PublisherConfig{Prefix: prefix, Sharded: o.sharded})
	r.env = append([]string{"HUB_REDIS_URL=" + r.cluster.url, "HUB_REDIS_PREFIX=" + prefix,
		"HUB_REDIS_SHARDED_PUBSUB=" + strconv.FormatBool(o.sharded), "HUB_LOG_LEVEL=warn",
		"HUB_SSE_DETACH=" + strconv.FormatBool(o.detach),
		// Every client comes from this machine: the per-address limits would count them as one.
		"HUB_LIMITS_MAX_CONNECTIONS=0", "HUB_LIMITS_MAX_CONNECTIONS_PER_IP=0", "HUB_LIMITS_CONNECTION_RATE=0",
		"HUB_LIMITS_MAX_NONSTREAM_CONNECTIONS_PER_IP=0"}, o.hubEnv...)
	for range o.hubs {
		h, err := rig.StartHub(r.bin, "127.0.0.1:0", r.env, 30*time.Second)
		if err != nil {
			return fmt.Errorf("start a hub: %w", err)
		}
		r.hubs = append(r.hubs, h)
	}
	return r.anchor(ctx)
}

// anchor makes the topics and publishes each one's first event, which every client resumes after.
func (r *fleetRun) anchor(ctx context.Context) error {
	stamp := time.Now().UnixNano() % 1e9
	for i := range r.o.topics {
		r.topics = append(r.topics, fmt.Sprintf("fleet.%d.%d", stamp, i))
	}
	r.anchors = make([]string, len(r.topics))
	for from := 0; from < len(r.topics); from += 256 {
		msgs := make([]pubsub.Message, 0, 256)
		for _, t := range r.topics[from:min(from+256, len(r.topics))] {
			msgs = append(msgs, pubsub.Message{Topic: t, Type: "progress", Data: []byte(`{"anchor":true}`)})
		}
		ids, errs := r.pub.PublishBatch(ctx, msgs)
		for k, err := range errs {
			if err != nil {
				return fmt.Errorf("publish the anchor of %s: %w", msgs[k].Topic, err)
			}
			r.anchors[from+k] = ids[k]
		}
	}
	return nil
}

// openStreams starts the load generators and waits until every client has a stream and the hubs count them all.
func (r *fleetRun) openStreams(ctx context.Context) error {
	o := r.o
	addrs := make([]string, len(r.hubs))
	for i, h := range r.hubs {
		addrs[i] = h.Addr
	}
	for k := range o.loaders {
		first, end := k*o.conns/o.loaders, (k+1)*o.conns/o.loaders
		spec := loaderSpec{Hubs: addrs, Topics: r.topics, Anchors: r.anchors, First: first, Count: end - first,
			DialConc: o.dialConc, Drain: o.drain}
		p, err := startLoader(r.loaderBin, spec)
		if err != nil {
			return err
		}
		r.loaders = append(r.loaders, p)
	}
	within := 2*time.Minute + time.Duration(o.conns)*time.Millisecond
	err := rig.Poll(ctx, within, pollEvery, fmt.Sprintf("%d streams open", o.conns), func() bool {
		s := r.status()
		return int(s.Opened) == o.conns && int(s.Open) == o.conns
	})
	if err != nil {
		s := r.status()
		return r.loaderTrouble(fmt.Errorf("%w (%d opened once, %d open now)", err, s.Opened, s.Open))
	}
	return rig.Poll(ctx, time.Minute, pollEvery, "the hubs count every stream", func() bool {
		n := 0
		for _, v := range r.streamsPerHub(ctx) {
			n += v
		}
		return n >= o.conns
	})
}

// status sums the loaders' latest status lines and shows them on the progress line.
func (r *fleetRun) status() loaderStatus {
	var s loaderStatus
	for _, l := range r.loaders {
		ls := l.latest()
		s.Open += ls.Open
		s.Opened += ls.Opened
		s.Delivered += ls.Delivered
		s.Bad += ls.Bad
	}
	r.m.open.Store(s.Open)
	r.m.got.Store(s.Delivered)
	r.m.bad.Store(s.Bad)
	return s
}

// loaderTrouble adds what a load generator said on stderr to err.
func (r *fleetRun) loaderTrouble(err error) error {
	var msgs []string
	for _, l := range r.loaders {
		if s := l.stderr(); s != "" {
			msgs = append(msgs, s)
		}
	}
	if len(msgs) == 0 {
		return err
	}
	return fmt.Errorf("%w; load generators said: %s", err, strings.Join(msgs, " | "))
}

// streamsPerHub reads hub_sse_connections_active from every hub.
func (r *fleetRun) streamsPerHub(ctx context.Context) []int {
	out := make([]int, len(r.hubs))
	for i, h := range r.hubs {
		if m, err := h.Metrics(ctx); err == nil {
			out[i] = int(m["hub_sse_connections_active"])
		}
	}
	return out
}

// truth reads every topic's stored ids after its anchor, in stream order, in one pipeline.
func (r *fleetRun) truth(ctx context.Context) ([][]string, error) {
	pipe := r.rdb.Pipeline()
	cmds := make([]*redis.XMessageSliceCmd, len(r.topics))
	for i, t := range r.topics {
		cmds[i] = pipe.XRange(ctx, r.keys.Stream(t), "("+r.anchors[i], "+")
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("read the streams: %w", err)
	}
	out := make([][]string, len(r.topics))
	for i, c := range cmds {
		for _, m := range c.Val() {
			out[i] = append(out[i], m.ID)
		}
	}
	return out, nil
}

// verdicts sends the truth to every loader and collects their results.
func (r *fleetRun) verdicts(truth [][]string) ([]loaderResult, error) {
	b, err := json.Marshal(loaderTruth{IDs: truth})
	if err != nil {
		return nil, err
	}
	out := make([]loaderResult, len(r.loaders))
	errs := make([]error, len(r.loaders))
	done := make(chan int)
	for i, l := range r.loaders {
		go func() { out[i], errs[i] = l.check(b, r.o.drain+2*time.Minute); done <- i }()
	}
	for range r.loaders {
		<-done
	}
	return out, errors.Join(errs...)
}

type quietLog struct{}

func (quietLog) Printf(context.Context, string, ...any) {}
