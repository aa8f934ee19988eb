package dispatch

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/syncverse/hub/internal/cli"
	hubconfig "github.com/syncverse/hub/internal/config"
)

// ErrInvariant is returned when a run breaks what its mode promises: a duplicate execution with the watchdog, a
// takeover outside [ttl, ttl+renew] after a crash, a paused holder's write that was accepted.
var ErrInvariant = errors.New("invariant violated")

// config is the parsed command line.
type config struct {
	dispatches  int
	entities    int
	concurrency int
	ttl         time.Duration
	renewEvery  time.Duration
	work        time.Duration
	jsonOut     bool
	noWatchdog  bool
	noFence     bool
	crash       bool
	pause       bool
	failover    bool
	runs        int           // --failover: how many fresh rigs and failovers
	replDelay   time.Duration // --failover: the replication link's delay
	zoneLoss    bool          // --failover: a second replica next to the master fails with it
	minReplicas int           // lease.Options.MinReplicas for every lease of the run
	redisURL    string
	prefix      string
	keep        bool
	progress    io.Writer // where the progress line is drawn: a terminal's stderr without --json; nil: nowhere

	// Hidden: the role of a child process started by --crash or --pause, and the entity it takes.
	child  string
	entity string
}

// launcher starts child processes. The hub binary re-executes itself; tests re-execute the test binary with an
// environment variable that makes TestMain play the child.
type launcher struct {
	exe string
	env []string
}

// About is what `dispatch-test` does, for its help.
const About = `Dispatches workflows that each take the lease of their entity, work, and create the entity's table through a
fenced registry; reports duplicate executions, TableAlreadyExists errors and release latency. --crash and --pause
run the crash and pause scenarios instead; --failover kills a Sentinel rig's master right after grants and counts
second holders (with --min-replicas N, grants wait for N replicas). On a terminal a progress line shows the run so far.`

// Tool is the dispatch-test program (cmd/dispatch-test).
var Tool = cli.Tool{Name: "dispatch-test",
	Usage: "[--dispatches N] [--entities N] [--ttl D] [--work D] [--crash | --pause | --failover [--runs N]] [--min-replicas N] [--json]",
	About: About, Run: Command}

// Command runs the lease verification. fs is the command's flag set (its Usage prints the help); args are the
// arguments after the command. Redis is the hub's redis.url (HUB_REDIS_URL, or --redis-url), where empty means an
// embedded miniredis on a free loopback port for the duration of the run. On a terminal stderr shows a progress line.
func Command(ctx context.Context, env cli.Env, fs *flag.FlagSet, args []string) error {
	cfg := hubconfig.Default()
	if err := hubconfig.ApplyEnv(&cfg, env.Getenv); err != nil {
		return err
	}
	return command(ctx, fs, args, env.Stdout, env.Stderr, cfg.Redis.URL, cli.IsTTY(env.Stderr))
}

// command is Command with its environment spelled out: redisURL is the default of --redis-url, tty says stderr is
// a terminal.
func command(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer, redisURL string, tty bool) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("dispatch-test: find own executable: %w", err)
	}
	return run(ctx, fs, args, stdout, stderr, redisURL, launcher{exe: exe}, tty)
}

func run(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer, redisURL string, l launcher, tty bool) error {
	cfg, err := parse(fs, args, stderr, redisURL)
	if err != nil {
		return err
	}
	if cfg.child != "" {
		return runChild(ctx, cfg, stdout)
	}
	if cfg.failover {
		return runFailover(ctx, cfg, stdout) // on rigs of its own: it kills their masters
	}
	if tty && !cfg.jsonOut {
		cfg.progress = stderr
	}
	url, stopRedis, err := redisOrEmbedded(cfg.redisURL)
	if err != nil {
		return fmt.Errorf("dispatch-test: %w", err)
	}
	defer stopRedis()
	cfg.redisURL = url
	switch {
	case cfg.crash:
		return runCrash(ctx, cfg, stdout, l)
	case cfg.pause:
		return runPause(ctx, cfg, stdout, l)
	default:
		return runDispatches(ctx, cfg, stdout)
	}
}

func parse(fs *flag.FlagSet, args []string, stderr io.Writer, redisURL string) (config, error) {
	cfg := config{redisURL: redisURL}
	fs.IntVar(&cfg.dispatches, "dispatches", 100, "workflows to dispatch")
	fs.IntVar(&cfg.entities, "entities", 10, "entities (projects) they are spread over; one lease per entity")
	fs.IntVar(&cfg.concurrency, "concurrency", 100, "dispatches running at once")
	fs.DurationVar(&cfg.ttl, "ttl", 30*time.Second, "lease TTL")
	fs.DurationVar(&cfg.renewEvery, "renew", 0, "watchdog period (default ttl/3)")
	fs.DurationVar(&cfg.work, "work", 60*time.Second, "how long each workflow works while holding the lease")
	fs.BoolVar(&cfg.jsonOut, "json", false, "print the report as JSON")
	fs.BoolVar(&cfg.noWatchdog, "no-watchdog", false, "do not renew leases (reproduces the incident when work > ttl)")
	fs.BoolVar(&cfg.noFence, "no-fence", false, "do not fence the side effect (shows TableAlreadyExists instead of stale-fence rejections)")
	fs.BoolVar(&cfg.crash, "crash", false, "SIGKILL a child process holding a lease and time the takeover")
	fs.BoolVar(&cfg.pause, "pause", false, "SIGSTOP a holder past its ttl, take over, resume it: its fenced write must be rejected")
	fs.BoolVar(&cfg.failover, "failover", false, "kill a Sentinel rig's master right after each grant (needs redis-server; starts its own rigs) and count second holders")
	fs.IntVar(&cfg.runs, "runs", 10, "--failover: how many failovers, each on a fresh rig")
	fs.DurationVar(&cfg.replDelay, "repl-delay", 50*time.Millisecond, "--failover: how long the replication link holds every byte")
	fs.BoolVar(&cfg.zoneLoss, "zone-loss", false, "--failover: a second replica, next to the master (no delay), fails with it")
	fs.IntVar(&cfg.minReplicas, "min-replicas", 0, "replicas that must acknowledge (WAIT) each acquisition, renewal and fenced write; 0: none")
	fs.StringVar(&cfg.redisURL, "redis-url", cfg.redisURL, "Redis URL (default: the hub's redis.url; empty: embedded)")
	fs.StringVar(&cfg.prefix, "prefix", "", "key prefix (default: a fresh one per run)")
	fs.BoolVar(&cfg.keep, "keep", false, "keep the run's keys in Redis afterwards")
	fs.StringVar(&cfg.child, "child", "", "")
	fs.StringVar(&cfg.entity, "entity", "", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, err
		}
		return cfg, fmt.Errorf("dispatch-test: %w: %w", cli.ErrUsage, err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if cfg.failover && !set["ttl"] {
		cfg.ttl = 10 * time.Second // longer than a failover, so that the first holder still holds when it ends
	}
	err := cfg.validate()
	if err == nil && cfg.failover && set["redis-url"] {
		err = errors.New("--failover starts its own Sentinel rigs (it SIGKILLs their masters and slows their replication links); it takes no --redis-url")
	}
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("unexpected argument %q (flags only; run \"dispatch-test -h\" for help)", fs.Arg(0))
	}
	if err != nil {
		fmt.Fprintf(stderr, "dispatch-test: %v\n", err)
		fs.Usage()
		return cfg, fmt.Errorf("dispatch-test: %w: %w", cli.ErrUsage, err)
	}
	if cfg.renewEvery == 0 {
		cfg.renewEvery = cfg.ttl / 3
	}
	if cfg.prefix == "" {
		cfg.prefix = "hub:dispatch-test:" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"
	}
	return cfg, nil
}

func (c config) validate() error {
	switch {
	case c.dispatches < 1 || c.entities < 1 || c.concurrency < 1:
		return errors.New("--dispatches, --entities and --concurrency must be at least 1")
	case c.ttl <= 0 || c.work < 0 || c.renewEvery < 0:
		return errors.New("--ttl must be positive, --work and --renew not negative")
	case c.renewEvery >= c.ttl:
		return errors.New("--renew must be shorter than --ttl")
	case c.crash && c.pause, c.failover && (c.crash || c.pause):
		return errors.New("--crash, --pause and --failover are exclusive")
	case c.minReplicas < 0 || c.runs < 1 || c.replDelay < 0:
		return errors.New("--min-replicas must not be negative, --runs at least 1, --repl-delay not negative")
	case c.child != "" && c.child != roleCrash && c.child != rolePause:
		return fmt.Errorf("unknown child role %q", c.child)
	}
	return nil
}
