package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/internal/redistest"
	"github.com/syncverse/hub/internal/ssetest"
	"github.com/syncverse/hub/pubsub"
)

// The README's first command: the hub with the embedded Redis and the demo agents, no Redis installed. Within a few
// seconds a client sees workflow progress and the agents' lock events.
func TestDemoWithEmbeddedRedis(t *testing.T) {
	env := map[string]string{"HUB_REDIS_EMBEDDED_ADDR": "127.0.0.1:0", "HUB_LOG_LEVEL": "warn"}
	ctx, cancel := context.WithCancel(context.Background())
	logs := &syncBuffer{}
	done, urls := make(chan error, 1), make(chan string, 1)
	go func() {
		done <- run(ctx, []string{"--demo", "--listen", "127.0.0.1:0"}, func(k string) string { return env[k] }, strings.NewReader(""),
			io.Discard, logs, func(url string) { urls <- url })
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run() = %v, want nil", err)
		}
	}()
	var base string
	select {
	case base = <-urls:
	case <-time.After(10 * time.Second):
		t.Fatalf("hub did not listen within 10s; logs:\n%s", logs)
	}
	c := ssetest.Open(t, base, ssetest.TopicQuery("demo"), "0-0")
	seen := map[string]bool{}
	for deadline := time.Now().Add(10 * time.Second); !(seen["progress"] && seen["lock"]) && time.Now().Before(deadline); {
		f := c.NextEvent(time.Until(deadline))
		var d map[string]any
		if err := json.Unmarshal([]byte(f.Data), &d); err != nil {
			t.Fatalf("demo event data %q: %v", f.Data, err)
		}
		if f.Event == "progress" && d["workflow"] == nil || f.Event == "lock" && d["key"] == nil {
			t.Errorf("demo %s event without its key field: %s", f.Event, f.Data)
		}
		seen[f.Event] = true
	}
	if !seen["progress"] || !seen["lock"] {
		t.Errorf("demo events seen %v within 10s, want progress and lock", seen)
	}
}

// hub demo, the compose trial's publisher: the same agents against a Redis of its own choosing, without a hub; their
// workflows land in the demo topic's stream until it is stopped. Without redis.url it says what is missing.
func TestDemoCommandPublishesToRedis(t *testing.T) {
	rs := redistest.Start(t)
	prefix := redistest.Prefix(t)
	env := map[string]string{"HUB_REDIS_URL": rs.URL(), "HUB_REDIS_PREFIX": prefix, "HUB_LOG_LEVEL": "warn"}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	logs := &syncBuffer{}
	go func() {
		done <- run(ctx, []string{"demo"}, func(k string) string { return env[k] }, strings.NewReader(""), io.Discard, logs, nil)
	}()
	key := pubsub.Keys{Prefix: prefix}.Stream("demo")
	var n int64
	for deadline := time.Now().Add(10 * time.Second); n < 4 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		n, _ = rs.Client().XLen(context.Background(), key).Result()
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run(demo) = %v after cancel, want nil; logs:\n%s", err, logs)
	}
	if n < 4 {
		t.Errorf("hub demo wrote %d events to %s within 10s, want the agents' progress (at least 4)", n, key)
	}

	var stderr bytes.Buffer
	err := run(context.Background(), []string{"demo"}, func(string) string { return "" }, strings.NewReader(""), io.Discard, &stderr, nil)
	if err == nil || !strings.Contains(err.Error(), "HUB_REDIS_URL") {
		t.Errorf("hub demo without redis.url = %v, want an error naming HUB_REDIS_URL", err)
	}
}
