package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// target is the hub under load and the Redis it reads: found at given addresses, or started here as children.
type target struct {
	url      string // http://host:port of the hub
	redisURL string
	pid      int // the hub process, 0 when unknown
	children []*exec.Cmd
	dir      string
}

// startTarget starts what the options ask for. The hub binary runs with the connection limits lifted (the load
// comes from one address) and the parent's HUB_* variables dropped; --hub-env adds more.
func startTarget(ctx context.Context, o *options) (*target, error) {
	t := &target{url: strings.TrimSuffix(o.url, "/"), redisURL: o.redisURL, pid: o.pid}
	if o.hubBin == "" {
		if t.url == "" || t.redisURL == "" {
			return nil, errors.New("give --url and --redis-url of a running hub, or --hub-bin to start one")
		}
		return t, nil
	}
	dir, err := os.MkdirTemp("", "hub-bench-")
	if err != nil {
		return nil, err
	}
	t.dir = dir
	if t.redisURL == "" {
		if err := t.startRedis(); err != nil {
			t.stop()
			return nil, err
		}
	}
	if err := t.startHub(ctx, o); err != nil {
		t.stop()
		return nil, err
	}
	return t, nil
}

func (t *target) startRedis() error {
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	host, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command("redis-server", "--bind", host, "--port", port, "--save", "", "--appendonly", "no",
		"--dir", t.dir, "--logfile", t.dir+"/redis.log")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server (or give --redis-url): %w", err)
	}
	t.children = append(t.children, cmd)
	t.redisURL = "redis://" + addr + "/0"
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			_ = c.Close()
			return nil
		}
	}
	return fmt.Errorf("redis-server on %s did not start", addr)
}

func (t *target) startHub(ctx context.Context, o *options) error {
	cmd := exec.Command(o.hubBin, "serve", "--listen", "127.0.0.1:0")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HUB_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	// Every client of a run comes from this machine: the per-address limits would count them as one.
	cmd.Env = append(cmd.Env, "HUB_REDIS_URL="+t.redisURL, "HUB_LIMITS_MAX_CONNECTIONS=0", "HUB_LIMITS_MAX_CONNECTIONS_PER_IP=0",
		"HUB_LIMITS_CONNECTION_RATE=0", "HUB_LIMITS_MAX_NONSTREAM_CONNECTIONS_PER_IP=0", "HUB_SSE_DETACH="+strconv.FormatBool(o.detach))
	cmd.Env = append(cmd.Env, o.hubEnv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	logf, err := os.Create(t.dir + "/hub.log")
	if err != nil {
		return err
	}
	defer logf.Close() // the child holds its own descriptor
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", o.hubBin, err)
	}
	t.children = append(t.children, cmd)
	t.pid = cmd.Process.Pid
	addr := make(chan string, 1)
	go func() { // ends with the child's stdout; stop waits for the child
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var l struct{ Message, URL string }
			if json.Unmarshal(sc.Bytes(), &l) == nil && l.Message == "hub listening" {
				a := strings.TrimPrefix(l.URL, "http://")
				addr <- a
			}
		}
	}()
	select {
	case a := <-addr:
		t.url = "http://" + a
	case <-time.After(10 * time.Second):
		return fmt.Errorf("the hub did not start listening (log: %s/hub.log)", t.dir)
	case <-ctx.Done():
		return ctx.Err()
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(t.url + "/readyz"); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return fmt.Errorf("the hub did not become ready (log: %s/hub.log)", t.dir)
}

// stop ends the children it started, hub first, and removes their files.
func (t *target) stop() {
	for i := len(t.children) - 1; i >= 0; i-- {
		c := t.children[i]
		_ = c.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = c.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = c.Process.Kill()
			<-done
		}
	}
	if t.dir != "" {
		_ = os.RemoveAll(t.dir)
	}
}

func (t *target) hostPort() string {
	return strings.TrimPrefix(strings.TrimPrefix(t.url, "http://"), "https://")
}

// metrics reads the named unlabelled series from the hub's /metrics.
func (t *target) metrics(names ...string) (map[string]float64, error) {
	resp, err := http.Get(t.url + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	out := make(map[string]float64, len(names))
	for line := range bytes.SplitSeq(body, []byte("\n")) {
		name, val, ok := bytes.Cut(line, []byte(" "))
		if !ok {
			continue
		}
		for _, n := range names {
			if string(name) == n {
				if v, err := strconv.ParseFloat(string(val), 64); err == nil {
					out[n] = v
				}
			}
		}
	}
	return out, nil
}

// waitActive waits until the hub counts at least n open streams.
func (t *target) waitActive(ctx context.Context, n int, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		m, err := t.metrics("hub_sse_connections_active")
		if err == nil && m["hub_sse_connections_active"] >= float64(n) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the hub shows %v open streams after %v, want %d", m["hub_sse_connections_active"], within, n)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

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

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
