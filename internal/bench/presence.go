package bench

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/syncverse/hub/internal/rig"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/internal/delay"
)

// PresenceSpec is one run of the presence cost scenario: streams spread round robin over topics and hub processes
// on one Redis, then an idle window in which nothing is published and nothing joins or leaves.
type PresenceSpec struct {
	HubBin    string
	RedisAddr string
	Prefix    string
	Hubs      int
	Topics    int
	Streams   int
	Presence  bool          // presence.enabled
	Interval  time.Duration // presence.interval (its default when zero)
	Window    time.Duration // the idle window measured
	DialConc  int           // streams connecting at once (default 64)
	Env       []string      // more KEY=VALUE for the hubs (hub-bench's --hub-env), after the scenario's own; {hub} is the hub's index
}

// PresenceResult is what the idle window cost.
type PresenceResult struct {
	Presence         bool
	Streams, Topics  int
	Hubs             int
	Window           time.Duration
	PresenceCommands float64 // presence's Redis commands a second (hset, pexpire, hdel, hgetall)
	AllCommands      float64 // every Redis command a second, the bench's own INFO aside
	HubCPUPercent    float64 // the hub processes' CPU together, percent of one core
	Entries          int     // presence hash fields in Redis at the end
}

// presenceCommands are the commands presence spends; in an idle window nothing else sends them.
var presenceCommands = []string{"hset", "pexpire", "hdel", "hgetall"}

// RunPresence starts the hubs, opens the streams, lets the entries settle, measures the idle window and stops.
func RunPresence(ctx context.Context, s PresenceSpec) (*PresenceResult, error) {
	if s.DialConc <= 0 {
		s.DialConc = 64
	}
	interval := s.Interval
	if interval <= 0 {
		interval = 10 * time.Second
	}
	env := []string{
		"HUB_REDIS_URL=redis://" + s.RedisAddr + "/0", "HUB_REDIS_PREFIX=" + s.Prefix, "HUB_LOG_LEVEL=warn",
		"HUB_LIMITS_MAX_CONNECTIONS=0", "HUB_LIMITS_MAX_CONNECTIONS_PER_IP=0", "HUB_LIMITS_CONNECTION_RATE=0",
		"HUB_PRESENCE_ENABLED=" + strconv.FormatBool(s.Presence), "HUB_PRESENCE_INTERVAL=" + interval.String(),
		"HUB_PRESENCE_EXPIRY=" + (3 * interval).String(),
	}
	env = append(env, s.Env...)
	var hubs []*rig.Hub
	defer func() {
		for _, h := range hubs {
			_ = h.Stop()
		}
	}()
	for i := range s.Hubs {
		own := make([]string, len(env))
		for j, kv := range env {
			own[j] = strings.ReplaceAll(kv, "{hub}", strconv.Itoa(i))
		}
		h, err := rig.StartHub(s.HubBin, "127.0.0.1:0", own, 30*time.Second)
		if err != nil {
			return nil, err
		}
		hubs = append(hubs, h)
	}
	conns, err := openPresenceStreams(ctx, s, hubs)
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	if err != nil {
		return nil, err
	}
	// Settle: every debounced write is done and the first refresh after the joins is past.
	if !delay.Sleep(ctx, interval+2*time.Second) {
		return nil, ctx.Err()
	}
	rdb := redis.NewClient(&redis.Options{Addr: s.RedisAddr})
	defer rdb.Close()
	// sample reads Redis's command counts and the hubs' CPU time, before and after the window.
	sample := func() (map[string]int64, float64, error) {
		calls, err := commandCalls(ctx, rdb)
		if err != nil {
			return nil, 0, err
		}
		cpu, err := hubsCPU(ctx, hubs)
		return calls, cpu, err
	}
	calls0, cpu0, err := sample()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if !delay.Sleep(ctx, s.Window) {
		return nil, ctx.Err()
	}
	calls1, cpu1, err := sample()
	if err != nil {
		return nil, err
	}
	took := time.Since(start).Seconds()
	res := &PresenceResult{Presence: s.Presence, Streams: s.Streams, Topics: s.Topics, Hubs: s.Hubs, Window: s.Window,
		HubCPUPercent: 100 * (cpu1 - cpu0) / took}
	for cmd, v := range calls1 {
		d := float64(v-calls0[cmd]) / took
		if !benchOwn[cmd] {
			res.AllCommands += d
		}
		if slices.Contains(presenceCommands, cmd) {
			res.PresenceCommands += d
		}
	}
	res.Entries, err = presenceFields(ctx, rdb, s.Prefix)
	return res, err
}

// openPresenceStreams opens s.Streams raw HTTP/1.1 streams, stream i on topic i%Topics through hub (i/Topics)%Hubs
// (so a topic's streams spread over the hubs: the most entries a load can make), and
// returns once each has its 200; the connections stay open, unread past the headers (the hub's heartbeats fit in
// the socket buffers for the length of a run).
func openPresenceStreams(ctx context.Context, s PresenceSpec, hubs []*rig.Hub) ([]net.Conn, error) {
	conns := make([]net.Conn, s.Streams)
	sem := make(chan struct{}, s.DialConc)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	d := &net.Dialer{Timeout: 10 * time.Second}
	for i := range s.Streams {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			h := hubs[(i/s.Topics)%len(hubs)]
			c, err := d.DialContext(ctx, "tcp", h.Addr)
			if err == nil {
				conns[i] = c
				err = openStream(c, h.Addr, fmt.Sprintf("%s.%d", s.Prefix, i%s.Topics))
			}
			if err != nil {
				mu.Lock()
				failed = cmpErr(failed, fmt.Errorf("stream %d: %w", i, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	live := conns[:0]
	for _, c := range conns {
		if c != nil {
			live = append(live, c)
		}
	}
	return live, failed
}

func cmpErr(old, err error) error {
	if old != nil {
		return old
	}
	return err
}

func openStream(c net.Conn, host, topic string) error {
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := fmt.Fprintf(c, "GET /events?topic=%s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", topic, host); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.Contains(line, " 200 ") {
		return fmt.Errorf("answer %q", strings.TrimSpace(line))
	}
	return c.SetDeadline(time.Time{})
}

func commandCalls(ctx context.Context, rdb *redis.Client) (map[string]int64, error) {
	text, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	return cmdstatCalls(text), nil
}

// cmdstatCalls reads the calls of each command from the text of INFO commandstats.
func cmdstatCalls(info string) map[string]int64 {
	calls := map[string]int64{}
	for line := range strings.Lines(info) {
		rest, ok := strings.CutPrefix(line, "cmdstat_")
		if !ok {
			continue
		}
		name, stats, _ := strings.Cut(rest, ":")
		n, _, _ := strings.Cut(strings.TrimPrefix(stats, "calls="), ",")
		v, _ := strconv.ParseInt(n, 10, 64)
		calls[name] = v
	}
	return calls
}

// hubsCPU is the hubs' process_cpu_seconds_total together.
func hubsCPU(ctx context.Context, hubs []*rig.Hub) (float64, error) {
	var sum float64
	for _, h := range hubs {
		m, err := h.Metrics(ctx)
		if err != nil {
			return 0, err
		}
		sum += m["process_cpu_seconds_total"]
	}
	return sum, nil
}

// presenceFields counts the fields of every presence hash under prefix.
func presenceFields(ctx context.Context, rdb *redis.Client, prefix string) (int, error) {
	n := 0
	iter := rdb.Scan(ctx, 0, prefix+":{*}:presence", 1000).Iterator()
	for iter.Next(ctx) {
		v, err := rdb.HLen(ctx, iter.Val()).Result()
		if err != nil {
			return n, err
		}
		n += int(v)
	}
	return n, iter.Err()
}
