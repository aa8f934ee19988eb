package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/config"
	"github.com/syncverse/hub/internal/rig"
)

// runBriefly runs the hub with env (and the list of its HUB_* names, as main's getenv gives it) until it prints
// that it listens, then stops it; it returns run's error, or nil when the hub started.
func runBriefly(t *testing.T, args []string, env map[string]string) (error, string) {
	t.Helper()
	var names []string
	for k := range env {
		names = append(names, k)
	}
	getenv := func(k string) string {
		if k == config.EnvListKey {
			return strings.Join(names, "\n")
		}
		return env[k]
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, logs := &rig.SyncBuffer{}, &rig.SyncBuffer{}
	done := make(chan error, 1)
	listening := make(chan string, 1)
	go func() {
		done <- hubtest.Run(ctx, args, getenv, strings.NewReader(""), out, logs, func(url string) { listening <- url })
	}()
	select {
	case err := <-done:
		return err, logs.String()
	case <-listening:
		cancel()
		<-done
		return nil, logs.String()
	case <-time.After(10 * time.Second):
		t.Fatalf("run(%q) neither failed nor listened within 10s; logs:\n%s", args, logs)
		return nil, ""
	}
}

// TestUnknownHubVariableStopsServe (#14, Also): a typo in a HUB_* name stops serve, naming it and the closest
// known name, instead of passing silently.
func TestUnknownHubVariableStopsServe(t *testing.T) {
	err, _ := runBriefly(t, []string{"serve", "--listen", "127.0.0.1:0"}, map[string]string{
		"HUB_REDIS_ULR": "redis://127.0.0.1:1/0", "HUB_REDIS_EMBEDDED_ADDR": "127.0.0.1:0",
	})
	if err == nil || !strings.Contains(err.Error(), "HUB_REDIS_ULR") || !strings.Contains(err.Error(), "HUB_REDIS_URL") {
		t.Errorf("serve with HUB_REDIS_ULR = %v; want an error naming HUB_REDIS_ULR and HUB_REDIS_URL", err)
	}
}

// TestEmbeddedRedisRefusedOnPublicListen (#14, Also): without redis.url the hub would keep events in its embedded
// development server; on a non-loopback listen that needs --demo or redis.embedded: true.
func TestEmbeddedRedisRefusedOnPublicListen(t *testing.T) {
	env := map[string]string{"HUB_AUTH_HMAC_SECRET": strings.Repeat("k", 32), "HUB_REDIS_EMBEDDED_ADDR": "127.0.0.1:0"}
	err, _ := runBriefly(t, []string{"serve", "--listen", "0.0.0.0:0"}, env)
	if err == nil || !strings.Contains(err.Error(), "redis.embedded") || !strings.Contains(err.Error(), "HUB_REDIS_URL") {
		t.Errorf("serve on 0.0.0.0 without redis.url = %v; want an error naming redis.url and redis.embedded", err)
	}
	env["HUB_REDIS_EMBEDDED"] = "true"
	if err, logs := runBriefly(t, []string{"serve", "--listen", "0.0.0.0:0"}, env); err != nil {
		t.Errorf("serve on 0.0.0.0 with redis.embedded: true = %v, want it to start; logs:\n%s", err, logs)
	}
	delete(env, "HUB_REDIS_EMBEDDED")
	if err, logs := runBriefly(t, []string{"serve", "--listen", "0.0.0.0:0", "--demo"}, env); err != nil {
		t.Errorf("serve --demo on 0.0.0.0 = %v, want it to start; logs:\n%s", err, logs)
	}
}

// TestRedisProblemAtStartIsLogged (#14, Also): an unreachable Redis, or one that refuses the credentials, is an
// error line at start; the hub still serves and is not ready.
func TestRedisProblemAtStartIsLogged(t *testing.T) {
	rs := rig.StartRedis(t)
	for name, url := range map[string]string{
		"unreachable":       "redis://127.0.0.1:1/0",
		"wrong credentials": strings.Replace(rs.URL(), "redis://", "redis://nobody:wrong@", 1),
	} {
		t.Run(name, func(t *testing.T) {
			hub := hubtest.Serve(t, []string{"serve", "--listen", "127.0.0.1:0"}, map[string]string{"HUB_REDIS_URL": url})
			defer func() { _ = hub.Stop() }()
			addr, logs := hub.URL, hub.Stderr
			var found bool
			for _, line := range logs.Lines() {
				var l map[string]any
				found = found || json.Unmarshal([]byte(line), &l) == nil && l["level"] == "error" && strings.Contains(line, "redis")
			}
			if !found || strings.Contains(logs.String(), "wrong") {
				t.Errorf("logs at start against %s (%s) lack an error line about Redis, or show the password:\n%s", name, url, logs)
			}
			if resp, err := http.Get(addr + "/readyz"); err != nil || resp.StatusCode != http.StatusServiceUnavailable {
				t.Errorf("GET /readyz = %v, %v; want 503", resp, err)
			} else {
				resp.Body.Close()
			}
		})
	}
}

// TestLogLinesAreJSON (#14, Also): the real binary, against a Redis that is not there, writes only JSON objects to
// stderr, go-redis's own complaints included; timestamps carry milliseconds.
func TestLogLinesAreJSON(t *testing.T) {
	bin := filepath.Join(hubtest.BuildHub(t), "hub")
	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "HUB_REDIS_URL=redis://127.0.0.1:1/0")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var lines []string
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			lines = append(lines, sc.Text())
			mu.Unlock()
		}
	}()
	fromRedis := func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, l := range lines {
			if strings.Contains(l, "failed to dial") {
				return true
			}
		}
		return false
	}
	_ = rig.Poll(context.Background(), 20*time.Second, 50*time.Millisecond, "a line about the failed dials", fromRedis) // judged below, with the stderr
	_ = cmd.Process.Signal(os.Interrupt)
	<-read
	_ = cmd.Wait()
	ms := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}`)
	if !fromRedis() {
		t.Errorf("no line about the failed dials within 20s; stderr:\n%s", strings.Join(lines, "\n"))
	}
	for _, l := range lines {
		var obj map[string]any
		if err := json.Unmarshal([]byte(l), &obj); err != nil {
			t.Errorf("stderr line is not one JSON object: %q", l)
			continue
		}
		if ts, _ := obj["time"].(string); !ms.MatchString(ts) {
			t.Errorf("time %q of %q has no milliseconds", ts, l)
		}
	}
}

// TestLogDurationsNameTheirUnit (#14, Also): a stream's end is logged with its duration in a key that says the unit.
func TestLogDurationsNameTheirUnit(t *testing.T) {
	rs := rig.StartRedis(t)
	h := hubtest.Start(t, rs)
	c := rig.OpenStream(t, h.URL, rig.TopicQuery("dur"), "")
	c.Next(5 * time.Second)
	c.Close()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		for _, line := range h.Output.Lines() {
			var l map[string]any
			if json.Unmarshal([]byte(line), &l) == nil && l["message"] == "stream closed" {
				if _, ok := l["duration_ms"].(float64); !ok || l["duration"] != nil {
					t.Errorf("stream closed line %s: want duration_ms, a number, and no bare duration", line)
				}
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no stream closed line within 5s:\n%s", h.Output)
		}
	}
}
