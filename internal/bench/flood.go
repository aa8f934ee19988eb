package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/syncverse/hub/auth"
	"github.com/syncverse/hub/internal/rig"
)

// The flood scenario's figures: one publisher, allowed one topic, floods it with failed workflows carrying large
// data at the default publish rate, while the webhook receiver is slow and another tenant publishes.
const (
	floodEvents   = 1500
	floodData     = 60000
	floodRate     = 100 // limits.publish_rate's default
	floodSlow     = 2500 * time.Millisecond
	floodSecret   = "bench-flood-secret-0123456789abcdef"
	floodTopic    = "project.1"
	floodOther    = "project.2"
	floodAlertMax = time.Minute
)

// FloodReport is what the flood scenario measured.
type FloodReport struct {
	Published        int     `json:"published"`
	FloodSeconds     float64 `json:"flood_s"`
	RSSGrowthMiB     []int64 `json:"rss_growth_mib"` // per replica, peak over the run minus before
	FreshRSSMiB      int64   `json:"fresh_replica_rss_mib"`
	RedisSlowestMs   float64 `json:"redis_slowest_command_ms"` // SLOWLOG's longest command
	RedisSlowestCmd  string  `json:"redis_slowest_command"`
	RedisProbeMaxMs  float64 `json:"redis_probe_max_ms"` // the longest PING answered during the run
	OtherPublishMax  Millis  `json:"other_publish_max_ms"`
	OtherPublishes   int     `json:"other_publishes"`
	BacklogMiB       float64 `json:"notify_backlog_mib"` // the outbox and retry set's memory in Redis, at most
	OtherAlertMs     Millis  `json:"other_first_alert_ms"`
	OtherAlertTimely bool    `json:"other_first_alert_within_limit"`
	Deliveries       int64   `json:"deliveries_received"`
	FloodRefused     int     `json:"flood_refused"` // the flood's publishes answered neither 202 nor 429
}

// floodDefaults picks the receiver's address and gives the started hub a secret and the webhook.
func floodDefaults(o *options) error {
	addr, err := rig.LoopbackAddr()
	if err != nil {
		return err
	}
	o.floodHook = addr
	o.hubEnv = append(o.hubEnv, "HUB_AUTH_HMAC_SECRET="+floodSecret, "HUB_NOTIFY_WEBHOOK_URL=http://"+addr+"/hook",
		"HUB_NOTIFY_TIMEOUT=10s", "HUB_NOTIFY_CLAIM_AFTER=1m")
	return nil
}

// floodReceiver is the slow webhook: it records each delivery's topic and when it came.
type floodReceiver struct {
	mu    sync.Mutex
	first map[string]time.Time
	count atomic.Int64
}

func (rc *floodReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var n struct{ Topic string }
	_ = json.NewDecoder(r.Body).Decode(&n)
	rc.count.Add(1)
	rc.mu.Lock()
	if _, ok := rc.first[n.Topic]; !ok {
		rc.first[n.Topic] = time.Now()
	}
	rc.mu.Unlock()
	select {
	case <-time.After(floodSlow):
	case <-r.Context().Done():
	}
	w.WriteHeader(http.StatusOK)
}

func (rc *floodReceiver) firstOf(topic string) (time.Time, bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	t, ok := rc.first[topic]
	return t, ok
}

// flood runs the scenario against two replicas (the started hub and one more), then starts a fresh third.
func flood(ctx context.Context, b *benchRun) (*Result, error) {
	if b.o.hubBin == "" {
		return nil, errors.New("the flood scenario starts replicas: give --hub-bin")
	}
	rc := &floodReceiver{first: map[string]time.Time{}}
	ln, err := net.Listen("tcp", b.o.floodHook)
	if err != nil {
		return nil, fmt.Errorf("listen for the webhook: %w", err)
	}
	hook := &http.Server{Handler: rc, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = hook.Serve(ln) }()
	defer hook.Close()
	second, err := b.replica(ctx)
	if err != nil {
		return nil, err
	}
	defer second.stop()
	rep := &FloodReport{}
	res := &Result{Scenario: "flood", Flood: rep}
	if err := b.rdb.ConfigSet(ctx, "slowlog-log-slower-than", "1000").Err(); err != nil {
		return nil, fmt.Errorf("set slowlog: %w", err)
	}
	_ = b.rdb.ConfigSet(ctx, "slowlog-max-len", "1024").Err()
	_ = b.rdb.Do(ctx, "SLOWLOG", "RESET").Err()
	pids := []int{b.t.pid, second.pid}
	base := make([]int64, len(pids))
	for i, pid := range pids {
		s, err := readProc(pid)
		if err != nil {
			return nil, fmt.Errorf("read a replica's RSS: %w", err)
		}
		base[i] = s.rss
	}
	peaks := append([]int64(nil), base...)
	watchCtx, stopWatch := context.WithCancel(ctx)
	var watch sync.WaitGroup
	var probeMax atomic.Int64
	var backlog atomic.Int64
	watch.Go(func() { b.floodWatch(watchCtx, pids, peaks, &probeMax, &backlog) })
	other := &histogram{}
	var others atomic.Int64
	watch.Go(func() { b.otherTenant(watchCtx, other, &others) })

	began := time.Now()
	rep.Published, rep.FloodRefused = b.floodPublish(ctx, b.t.url)
	rep.FloodSeconds = time.Since(began).Seconds()
	if err := b.otherAlert(ctx, rc, rep); err != nil {
		stopWatch()
		watch.Wait()
		return nil, err
	}
	stopWatch()
	watch.Wait()
	for i := range pids {
		rep.RSSGrowthMiB = append(rep.RSSGrowthMiB, (peaks[i]-base[i])>>20)
	}
	rep.RedisProbeMaxMs = float64(probeMax.Load()) / 1e6
	rep.BacklogMiB = float64(backlog.Load()) / (1 << 20)
	rep.OtherPublishMax, rep.OtherPublishes = ms(time.Duration(other.max.Load())), int(others.Load())
	rep.RedisSlowestMs, rep.RedisSlowestCmd = b.slowest(ctx)
	fresh, err := b.freshRSS(ctx)
	if err != nil {
		return nil, err
	}
	rep.FreshRSSMiB = fresh >> 20
	rep.Deliveries = rc.count.Load()
	return res, nil
}

// otherAlert publishes a failure on another topic and times it until the receiver has it.
func (b *benchRun) otherAlert(ctx context.Context, rc *floodReceiver, rep *FloodReport) error {
	sent := time.Now()
	_, err := floodPost(ctx, b.t.url, floodToken(floodOther), floodOther,
		`{"workflow":"other-fail","status":"failed","message":"real"}`)
	if err != nil {
		return fmt.Errorf("publish the other topic's failure: %w", err)
	}
	for deadline := sent.Add(floodAlertMax); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if at, ok := rc.firstOf(floodOther); ok {
			rep.OtherAlertMs, rep.OtherAlertTimely = ms(at.Sub(sent)), true
			return nil
		}
	}
	rep.OtherAlertMs = ms(floodAlertMax)
	return nil
}

// replica starts one more hub on the same Redis, with the same environment.
func (b *benchRun) replica(ctx context.Context) (*target, error) {
	r := &target{redisURL: b.t.redisURL}
	if err := r.startHub(b.o); err != nil {
		return nil, fmt.Errorf("start a replica: %w", err)
	}
	return r, nil
}

// freshRSS starts a replica after the flood and returns its largest RSS over its first 10 s.
func (b *benchRun) freshRSS(ctx context.Context) (int64, error) {
	r, err := b.replica(ctx)
	if err != nil {
		return 0, err
	}
	defer r.stop()
	var peak int64
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if s, err := readProc(r.pid); err == nil {
			peak = max(peak, s.rss)
		}
	}
	return peak, nil
}

// floodWatch samples the replicas' RSS, a PING's latency and the outbox's memory until ctx ends.
func (b *benchRun) floodWatch(ctx context.Context, pids []int, peaks []int64, probeMax, backlog *atomic.Int64) {
	base := b.o.prefix + ":{notify}:"
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for n := 0; ; n++ {
		for i, pid := range pids {
			if s, err := readProc(pid); err == nil {
				peaks[i] = max(peaks[i], s.rss)
			}
		}
		start := time.Now()
		if b.rdb.Ping(ctx).Err() == nil {
			if d := int64(time.Since(start)); d > probeMax.Load() {
				probeMax.Store(d)
			}
		}
		if n%10 == 0 {
			var sum int64
			for _, k := range []string{"outbox", "retry"} {
				v, _ := b.rdb.MemoryUsage(ctx, base+k).Result()
				sum += v
			}
			if sum > backlog.Load() {
				backlog.Store(sum)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// otherTenant publishes a small event on its own topic every 100 ms with its own token, timing each.
func (b *benchRun) otherTenant(ctx context.Context, h *histogram, n *atomic.Int64) {
	tok := floodToken(floodOther)
	for i := 0; ctx.Err() == nil; i++ {
		start := time.Now()
		if _, err := floodPost(ctx, b.t.url, tok, floodOther, fmt.Sprintf(`{"workflow":"steady","status":"running","step":"%d"}`, i)); err == nil {
			h.add(int64(time.Since(start)))
			n.Add(1)
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// floodPublish sends floodEvents failed workflows with floodData bytes of message each, paced at floodRate, the
// default publish rate; a 429 is retried after a short wait, other refusals (a 503 from a Redis the flood made
// slow) are counted. It returns how many were published and how many refused.
func (b *benchRun) floodPublish(ctx context.Context, url string) (int, int) {
	tok := floodToken(floodTopic)
	msg := strings.Repeat("x", floodData)
	tick := time.NewTicker(time.Second / floodRate)
	defer tick.Stop()
	var wg sync.WaitGroup
	var published, refused atomic.Int64
	sem := make(chan struct{}, 8)
	for i := range floodEvents {
		<-tick.C
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			data := fmt.Sprintf(`{"workflow":"wf-%d","status":"failed","message":%q}`, i, msg)
			for try := 0; try < 50 && ctx.Err() == nil; try++ {
				status, err := floodPost(ctx, url, tok, floodTopic, data)
				if err == nil {
					published.Add(1)
					return
				}
				if status != http.StatusTooManyRequests {
					refused.Add(1)
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	return int(published.Load()), int(refused.Load())
}

var floodClient = &http.Client{Timeout: 30 * time.Second}

// floodPost publishes one progress event through POST /publish.
func floodPost(ctx context.Context, url, tok, topic, data string) (int, error) {
	body := fmt.Sprintf(`{"topic":%q,"type":"progress","data":%s}`, topic, data)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/publish", bytes.NewReader([]byte(body)))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := floodClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusAccepted {
		return resp.StatusCode, fmt.Errorf("POST /publish: %d %s", resp.StatusCode, msg)
	}
	return resp.StatusCode, nil
}

func floodToken(topic string) string {
	tok, _ := auth.Sign([]byte(floodSecret), auth.Grant{Publish: []string{topic}},
		auth.Claims{Subject: "bench-" + topic, TTL: time.Hour}, time.Now())
	return tok
}

// slowest returns SLOWLOG's longest command since the run began, in ms, and what it was.
func (b *benchRun) slowest(ctx context.Context) (float64, string) {
	logs, err := b.rdb.SlowLogGet(ctx, 1024).Result()
	if err != nil {
		return 0, ""
	}
	var top time.Duration
	var what string
	for _, l := range logs {
		if l.Duration > top {
			top = l.Duration
			args := l.Args[:min(len(l.Args), 4)]
			for i, a := range args {
				args[i] = a[:min(len(a), 60)]
			}
			what = strings.Join(args, " ")
		}
	}
	return float64(top) / 1e6, what
}

func (f *FloodReport) rows(row func(string, string, ...any)) {
	row("flood", "%d events of %d KB on %s in %.1f s (%d refused)", f.Published, floodData/1000, floodTopic,
		f.FloodSeconds, f.FloodRefused)
	row("replica RSS growth", "%v MiB (peak over the run minus before)", f.RSSGrowthMiB)
	row("fresh replica RSS", "%d MiB (peak over its first 10 s)", f.FreshRSSMiB)
	row("redis longest", "%.1f ms (SLOWLOG: %s); PING probe max %.1f ms", f.RedisSlowestMs, f.RedisSlowestCmd, f.RedisProbeMaxMs)
	row("other tenant publish", "max %v ms over %d publishes", f.OtherPublishMax, f.OtherPublishes)
	row("notify backlog", "%.2f MiB in Redis at most", f.BacklogMiB)
	alert := fmt.Sprintf("%v ms", f.OtherAlertMs)
	if !f.OtherAlertTimely {
		alert = fmt.Sprintf("not within %v", floodAlertMax)
	}
	row("other topic's first alert", "%s; %d deliveries received in all", alert, f.Deliveries)
}
