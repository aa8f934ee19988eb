package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/internal/cli"
	"github.com/syncverse/hub/internal/progress"
	"github.com/syncverse/hub/pubsub"
)

// ErrCheck is returned when a delivery was lost, duplicated or out of order.
var ErrCheck = errors.New("deliveries failed the check")

type options struct {
	scenario    string
	url         string
	redisURL    string
	prefix      string
	pid         int
	hubBin      string
	benchBin    string // the fleet's load generators and the floor run this binary (default: this one)
	target      string // hub, or floor: the topics scenario against the floor server instead
	hubEnv      multiFlag
	detach      bool
	topic       string
	conns       int
	events      int
	rate        float64
	duration    time.Duration
	publishers  int
	payload     int
	batch       int
	replay      int
	repeat      int
	hold        time.Duration
	drain       time.Duration
	dialConc    int
	asJSON      bool
	cold        bool
	hubs        int  // fleet: hub processes
	loaders     int  // fleet: load-generator processes
	topics      int  // fleet, topics
	chaos       bool // fleet: faults during the run
	sharded     bool // fleet: sharded pub/sub
	tp          topicsOptions
	floodHook   string // flood: the webhook receiver's address
	scenarioRun func(ctx context.Context, b *benchRun) (*Result, error)
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// About is what `hub-bench` does, for its help.
const About = `Loads the hub and measures it; prints a table, or JSON with --json, and exits 1 when a delivery was lost,
duplicated or out of order. On a terminal a progress line shows the run so far.

Scenarios (--scenario):
  fanout   N clients on one topic; publish M events at R/s; check every delivery; latency, throughput, CPU, RSS
  idle     N clients, no events, held for --hold: RSS per connection, idle CPU, heartbeats
  replay   one client misses K events and reconnects with Last-Event-ID: time to first and last replayed event
  storm    N clients reconnect at once, each replaying K events: time until all are done
  publish  publishers only, as fast as Redis takes them: events/s
  replay-hog  N clients (default 16) resume a topic of K events of --payload bytes (default 1000 × 60 KB) from
           early positions and never read; one more reads it all: the hub's RSS before and at its peak
  topics   N clients over T topics (default 10,000 over 5,000), events spread over all of them at R/s while --churn
           topics a second gain and lose a client; Redis commands idle and under load (INFO commandstats)
  fleet    --hubs hub processes on one Redis Cluster (3 masters + 3 replicas started here, or --redis-url), N streams
           (default 100,000) over --topics topics from --loaders load-generator processes, R events/s for --duration
           (default 500/s, 60 s); --chaos: a cluster failover, a master kill, a slot migration and a rolling restart
           of one hub during the run. Every client checks every event; RSS per stream per hub, CPU per delivery,
           Redis commands and CPU per event
  flood    one publisher, allowed only project.1, floods it through POST /publish at the default rate with 1,500
           failed workflows of 60 KB while the webhook receiver takes 2.5 s a request and another tenant publishes
           every 100 ms; two replicas (--hub-bin), then a fresh third: each replica's RSS growth, the fresh one's RSS,
           Redis's longest command, the other tenant's publish latency, the notification backlog in Redis and the
           time until another topic's first alert reaches the receiver
  presence --hubs hub processes (default 2, --hub-bin) on one Redis, N streams (default 1,000) over --topics topics
           (default 10), each topic watched on every hub; an idle --hold window (default 30 s) with presence off,
           then on, --repeat pairs (default 2): presence's Redis commands a second and the hubs' CPU, on and off

The hub: --hub-bin PATH starts that binary (on a free port, connection limits lifted, against --redis-url or a
redis-server started here), or --url and --redis-url name a running one (--pid to read its CPU and RSS).`

// Tool is the hub-bench program (cmd/hub-bench).
var Tool = cli.Tool{Name: "hub-bench", Usage: "[--scenario NAME] [--hub-bin PATH | --url URL --redis-url URL] [--json]",
	About: About, Run: Command}

// Command runs the load generator. fs is the command's flag set (its Usage prints the help); on a terminal stderr
// shows a progress line.
func Command(ctx context.Context, env cli.Env, fs *flag.FlagSet, args []string) error {
	return command(ctx, fs, args, env.Stdout, env.Stderr, cli.IsTTY(env.Stderr))
}

func command(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer, tty bool) error {
	o, err := parse(fs, args, stderr)
	if err != nil {
		return err
	}
	if o.scenario == "fleet" || o.scenario == fleetLoader {
		return fleetCommand(ctx, o, stdout, stderr, tty)
	}
	if o.scenario == "presence" {
		return presenceCommand(ctx, o, stdout)
	}
	if o.scenario == floorScenario {
		return floorServe(ctx, o, stdout)
	}
	if err := raiseNoFile(o.conns); err != nil {
		return err
	}
	t, err := startTarget(ctx, o)
	if err != nil {
		return err
	}
	defer t.stop()
	opt, err := redis.ParseURL(t.redisURL)
	if err != nil {
		return fmt.Errorf("--redis-url: %w", err)
	}
	opt.PoolSize = max(opt.PoolSize, 2*o.publishers)
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	b := &benchRun{o: o, t: t, rdb: rdb, pub: pubsub.NewPublisher(rdb, pubsub.PublisherConfig{Prefix: o.prefix}), m: &meter{}}
	return report(o, b.m, stdout, stderr, tty, func() (outcome, error) { return o.scenarioRun(ctx, b) })
}

// outcome is a run's result: printed, and checked.
type outcome interface {
	print(w io.Writer, asJSON bool) error
	passed() bool
}

func (r *Result) passed() bool      { return r.Check.ok() }
func (r *FleetResult) passed() bool { return r.Check.ok() }

// report runs a scenario under the progress line (on a terminal's stderr, without --json), prints its result and
// says whether its check held.
func report(o *options, m *meter, stdout, stderr io.Writer, tty bool, run func() (outcome, error)) error {
	var w io.Writer
	if tty && !o.asJSON {
		w = stderr
	}
	began := time.Now()
	line := progress.Start(w, progressEvery, func() string { return m.line(o, time.Since(began)) })
	res, err := run()
	line.Stop()
	if err != nil {
		return err
	}
	if err := res.print(stdout, o.asJSON); err != nil {
		return err
	}
	if !res.passed() {
		return ErrCheck
	}
	return nil
}

func parse(fs *flag.FlagSet, args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs.StringVar(&o.scenario, "scenario", "fanout", "fanout, idle, replay, storm, publish, replay-hog, topics, flood, presence or fleet")
	fs.StringVar(&o.url, "url", "", "`URL` of a running hub (with --redis-url)")
	fs.StringVar(&o.redisURL, "redis-url", "", "Redis `URL` the hub reads; the bench publishes there")
	fs.StringVar(&o.prefix, "prefix", "hub", "the hub's Redis key `prefix`")
	fs.IntVar(&o.pid, "pid", 0, "the running hub's process `id`, to read its CPU and RSS from /proc")
	fs.StringVar(&o.hubBin, "hub-bin", "", "start this hub `binary` instead of using --url")
	fs.StringVar(&o.benchBin, "bench-bin", "", "")
	fs.StringVar(&o.target, "target", "hub", "topics: hub (--hub-bin), or floor: the same load on a minimal Redis-to-SSE server started here (no history, replay or heartbeats), to compare")
	fs.Var(&o.hubEnv, "hub-env", "`KEY=VALUE` for the started hub (repeatable), e.g. HUB_SSE_HEARTBEAT=1s")
	fs.BoolVar(&o.detach, "detach", true, "the started hub serves HTTP/1.1 streams on its raw engine; false: through net/http, for an A/B (HUB_SSE_DETACH)")
	fs.StringVar(&o.topic, "topic", "", "`topic` to use (default: a fresh bench.<time>)")
	fs.IntVar(&o.conns, "conns", 1000, "SSE connections `N`")
	fs.IntVar(&o.events, "events", 0, "events `M` to publish (default: rate × duration)")
	fs.Float64Var(&o.rate, "rate", 200, "events per second `R`, all publishers together (0: as fast as possible)")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "publishing time when --events is not given")
	fs.IntVar(&o.publishers, "publishers", 4, "concurrent pipelined publishers")
	fs.IntVar(&o.payload, "payload", 128, "event data `bytes`")
	fs.IntVar(&o.batch, "batch", 256, "most events per pipeline")
	fs.IntVar(&o.replay, "replay", 1000, "events `K` each client replays (replay, storm)")
	fs.IntVar(&o.repeat, "repeat", 5, "replay: measurements, the median is reported")
	fs.BoolVar(&o.cold, "cold", false, "replay: no other client follows the topic, so the hub subscribes to it first")
	fs.DurationVar(&o.hold, "hold", 30*time.Second, "idle: how long to hold the connections open (fleet: before publishing, default 10s)")
	fs.DurationVar(&o.drain, "drain", 15*time.Second, "how long to wait for deliveries after the last publish")
	fs.IntVar(&o.dialConc, "dial-concurrency", 256, "connections being opened at once")
	fs.BoolVar(&o.asJSON, "json", false, "print JSON instead of a table")
	fs.IntVar(&o.hubs, "hubs", 0, "fleet, presence: hub processes (default 5, more when the streams do not fit under RLIMIT_NOFILE)")
	fs.IntVar(&o.loaders, "loaders", 0, "fleet: load-generator processes (default one per 15,000 streams, at least 2)")
	fs.IntVar(&o.topics, "topics", 1000, "fleet, topics: topics, the streams spread evenly over them (topics: default --conns/2)")
	topicsFlags(fs, o)
	fs.BoolVar(&o.chaos, "chaos", false, "fleet: a cluster failover, a master kill, a slot migration and a hub restart during the run")
	fs.BoolVar(&o.sharded, "sharded", true, "fleet: the hubs use sharded pub/sub (SSUBSCRIBE/SPUBLISH)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, cli.ErrUsage
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if o.scenario == "publish" && !set["rate"] {
		o.rate = 0 // the publish scenario measures how fast, unless asked for a pace
	}
	if o.scenario == "replay-hog" {
		hogDefaults(o, set)
	}
	if o.scenario == "topics" {
		topicsDefaults(o, set)
	}
	if o.scenario == "presence" {
		presenceDefaults(o, set)
	}
	if o.scenario == "flood" {
		if err := floodDefaults(o); err != nil {
			return nil, err
		}
	}
	fleet := o.scenario == "fleet" || o.scenario == fleetLoader
	if fleet {
		fleetDefaults(o, set)
	}
	runs := map[string]func(context.Context, *benchRun) (*Result, error){
		"fanout": fanout, "idle": idle, "replay": replay, "storm": storm, "publish": publishOnly, "replay-hog": replayHog, "topics": topics,
		"flood": flood,
	}
	o.scenarioRun = runs[o.scenario]
	var bad []string
	if o.scenarioRun == nil && !fleet && o.scenario != "presence" && o.scenario != floorScenario {
		bad = append(bad, "--scenario must be one of fanout, idle, replay, storm, publish, replay-hog, topics, flood, presence, fleet")
	}
	if o.scenario == "fleet" {
		bad = append(bad, fleetCheck(o)...)
		if o.hubBin == "" {
			bad = append(bad, "--scenario fleet starts its hubs from --hub-bin PATH (go build -o hub-bin . at the module root)")
		}
	}
	if fs.NArg() > 0 {
		bad = append(bad, fmt.Sprintf("unexpected argument %q (flags only; run \"hub-bench -h\" for help)", fs.Arg(0)))
	}
	if o.target != "hub" && (o.target != "floor" || o.scenario != "topics") {
		bad = append(bad, "--target is hub, or floor with --scenario topics")
	}
	if set["detach"] && o.hubBin == "" {
		bad = append(bad, "--detach applies to a hub started with --hub-bin; a running hub has its own sse.detach")
	}
	if o.conns < 1 || o.publishers < 1 || o.batch < 1 || o.replay < 1 || o.repeat < 1 || o.dialConc < 1 {
		bad = append(bad, "--conns, --publishers, --batch, --replay, --repeat and --dial-concurrency must be at least 1")
	}
	if o.rate < 0 || o.payload < 64 {
		bad = append(bad, "--rate must not be negative and --payload must be at least 64")
	}
	if o.events <= 0 {
		o.events = int(o.rate * o.duration.Seconds())
		if o.rate == 0 {
			o.events = 100000
		}
	}
	if o.topic == "" {
		o.topic = fmt.Sprintf("bench.%d", time.Now().UnixNano())
	}
	if len(bad) > 0 {
		fmt.Fprintln(stderr, "hub-bench: "+strings.Join(bad, "; "))
		fs.Usage()
		return nil, cli.ErrUsage
	}
	return o, nil
}

// setDefault sets *p to v unless the command line gave the flag name: a scenario's own default.
func setDefault[T any](set map[string]bool, name string, p *T, v T) {
	if !set[name] {
		*p = v
	}
}
