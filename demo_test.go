package main

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/internal/ssetest"
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
