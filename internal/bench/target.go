package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/syncverse/hub/internal/rig"
)

// target is the hub under load and the Redis it reads: found at given addresses, or started here as children.
type target struct {
	url      string // http://host:port of the hub
	redisURL string
	pid      int        // the hub process, 0 when unknown
	hub      *rig.Hub   // the hub started here, if any
	floor    *floorProc // the floor started here instead (--target floor)
	owner    *rig.Owner // what started the Redis here, if it did
}

// startTarget starts what the options ask for. The hub binary runs with the connection limits lifted (the load
// comes from one address) and the parent's HUB_* variables dropped; --hub-env adds more.
func startTarget(_ context.Context, o *options) (*target, error) {
	t := &target{url: strings.TrimSuffix(o.url, "/"), redisURL: o.redisURL, pid: o.pid}
	if o.hubBin == "" && o.target != "floor" {
		if t.url == "" || t.redisURL == "" {
			return nil, errors.New("give --url and --redis-url of a running hub, or --hub-bin to start one")
		}
		return t, nil
	}
	if t.redisURL == "" {
		t.owner = &rig.Owner{}
		err := t.owner.Do(func() { t.redisURL = rig.StartRedisWith(t.owner, rig.RedisOptions{}).URL() })
		if err != nil {
			t.stop()
			return nil, fmt.Errorf("start redis-server (or give --redis-url): %w", err)
		}
	}
	if o.target == "floor" {
		return t, t.startFloor(o)
	}
	if err := t.startHub(o); err != nil {
		t.stop()
		return nil, err
	}
	return t, nil
}

// startFloor runs the floor (this program, --bench-bin) on the target's Redis in place of the hub.
func (t *target) startFloor(o *options) error {
	bin := o.benchBin
	if bin == "" {
		var err error
		if bin, err = os.Executable(); err != nil {
			t.stop()
			return err
		}
	}
	f, u, err := startFloor(bin, t.redisURL, o.prefix)
	if err != nil {
		t.stop()
		return err
	}
	t.floor, t.url, t.pid = f, u, f.pid()
	return nil
}

func (t *target) startHub(o *options) error {
	// Every client of a run comes from this machine: the per-address limits would count them as one.
	env := append([]string{"HUB_REDIS_URL=" + t.redisURL, "HUB_LIMITS_MAX_CONNECTIONS=0", "HUB_LIMITS_MAX_CONNECTIONS_PER_IP=0",
		"HUB_LIMITS_CONNECTION_RATE=0", "HUB_LIMITS_MAX_NONSTREAM_CONNECTIONS_PER_IP=0", "HUB_SSE_DETACH=" + strconv.FormatBool(o.detach)},
		o.hubEnv...)
	h, err := rig.StartHub(o.hubBin, "127.0.0.1:0", env, 10*time.Second)
	if err != nil {
		return fmt.Errorf("start %s: %w", o.hubBin, err)
	}
	t.hub, t.url, t.pid = h, h.URL, h.Pid()
	return nil
}

// stop ends what it started, hub first.
func (t *target) stop() {
	if t.hub != nil {
		_ = t.hub.Stop()
	}
	if t.floor != nil {
		t.floor.stop()
	}
	if t.owner != nil {
		t.owner.Close()
	}
}

func (t *target) hostPort() string {
	return strings.TrimPrefix(strings.TrimPrefix(t.url, "http://"), "https://")
}

// metrics reads the named unlabelled series from the hub's /metrics.
func (t *target) metrics(names ...string) (map[string]float64, error) {
	all, err := rig.Metrics(context.Background(), nil, t.url, "")
	if err != nil {
		return nil, err
	}
	out := make(map[string]float64, len(names))
	for _, n := range names {
		if v, ok := all[n]; ok {
			out[n] = v
		}
	}
	return out, nil
}

// waitOpened waits until the hub counts at least n streams opened since it started: streams of an earlier run that
// close meanwhile do not hide this run's (as a count of open streams would).
func (t *target) waitOpened(ctx context.Context, n int, within time.Duration) error {
	return rig.PollWhy(ctx, within, 100*time.Millisecond, fmt.Sprintf("the hub counting %d streams opened", n), func() (bool, string) {
		m, err := t.metrics(openedStreams)
		seen := m[openedStreams]
		return err == nil && seen >= float64(n), fmt.Sprintf("it shows %v", seen)
	})
}

// openedStreams is the counter of streams a hub (and the floor) opened.
const openedStreams = "hub_sse_connections_opened_total"

// sample is one reading of a process from /proc.
type sample struct {
	at     time.Time
	ticks  int64 // user + system CPU, in clock ticks (USER_HZ, 100 on Linux)
	rss    int64 // bytes
	writes int64 // write system calls so far
}

func readProc(pid int) (sample, error) {
	s := sample{at: time.Now()}
	p := "self"
	if pid > 0 {
		p = strconv.Itoa(pid)
	}
	stat, err := os.ReadFile("/proc/" + p + "/stat")
	if err != nil {
		return s, err
	}
	// The command name may hold spaces; the fields we need follow its closing parenthesis.
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(f) < 22 {
		return s, fmt.Errorf("/proc/%s/stat: short", p)
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	rssPages, _ := strconv.ParseInt(f[21], 10, 64)
	s.ticks, s.rss = ut+st, rssPages*int64(os.Getpagesize())
	if io, err := os.ReadFile("/proc/" + p + "/io"); err == nil { // write syscalls show how well writes are batched
		for line := range strings.Lines(string(io)) {
			if v, ok := strings.CutPrefix(line, "syscw: "); ok {
				s.writes, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			}
		}
	}
	return s, nil
}

// cpuPercent is the CPU used between a and b, in percent of one core.
func cpuPercent(a, b sample) float64 {
	wall := b.at.Sub(a.at).Seconds()
	if wall <= 0 {
		return 0
	}
	return float64(b.ticks-a.ticks) / 100 / wall * 100
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// raiseNoFile lifts the open-file limit to fit n connections (and the hub child, which inherits it).
func raiseNoFile(n int) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return err
	}
	want := uint64(n + 4096)
	if lim.Cur >= want {
		return nil
	}
	if lim.Max < want {
		lim.Max = want // allowed for root; otherwise the soft limit below is the best we get
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: want, Max: want}); err == nil {
			return nil
		}
		_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
		want = lim.Max
	}
	lim.Cur = want
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("raise RLIMIT_NOFILE to %d: %w", want, err)
	}
	if int(want) < n+64 {
		return fmt.Errorf("RLIMIT_NOFILE is at most %d here (raising the hard limit needs CAP_SYS_RESOURCE): too low for %d connections; at most %d", want, n, want-64)
	}
	return nil
}
