package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/internal/redistest"
	"github.com/syncverse/hub/pubsub"
)

// testHub is the real hub, run through run() on a loopback port against a test's Redis.
type testHub struct {
	t      testing.TB
	URL    string // http://127.0.0.1:PORT
	Addr   string
	Redis  *redistest.Server
	Prefix string
	RDB    *redis.Client
	Pub    *pubsub.Publisher

	env    map[string]string
	cancel context.CancelFunc
	done   chan error
	logs   *syncBuffer
}

// startHub runs the hub against rs with a key prefix of its own; env holds extra "KEY=VALUE" settings
// (HUB_SSE_HEARTBEAT=200ms, ...). It is stopped when the test ends.
func startHub(t testing.TB, rs *redistest.Server, env ...string) *testHub {
	t.Helper()
	return startHubOn(t, rs, "127.0.0.1:0", env...)
}

// startHubOn is startHub on a listen address of the test's choice.
func startHubOn(t testing.TB, rs *redistest.Server, listen string, env ...string) *testHub {
	t.Helper()
	h := &testHub{t: t, Redis: rs, Prefix: "t" + strings.ReplaceAll(fmt.Sprint(time.Now().UnixNano()), "-", ""), env: map[string]string{}}
	h.env["HUB_REDIS_URL"] = rs.URL()
	h.env["HUB_REDIS_PREFIX"] = h.Prefix
	h.env["HUB_LOG_LEVEL"] = "info"
	h.env["HUB_SHUTDOWN_TIMEOUT"] = "5s"
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		h.env[k] = v
	}
	h.RDB = rs.Client()
	h.Pub = pubsub.NewPublisher(h.RDB, pubsub.PublisherConfig{Prefix: h.Prefix})
	h.start(listen)
	t.Cleanup(func() { h.Stop() })
	return h
}

func (h *testHub) getenv(k string) string { return h.env[k] }

func (h *testHub) start(listen string) {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	h.logs = &syncBuffer{}
	h.cancel, h.done = cancel, make(chan error, 1)
	go func() {
		h.done <- run(ctx, []string{"serve", "--listen", listen}, h.getenv, strings.NewReader(""), out, h.logs)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if line, ok := strings.CutPrefix(out.String(), "hub listening on "); ok {
			h.URL = strings.TrimSpace(line)
			h.Addr = strings.TrimPrefix(h.URL, "http://")
			h.waitReady()
			return
		}
		select {
		case err := <-h.done:
			h.t.Fatalf("run() returned before listening: %v\nlogs:\n%s", err, h.logs)
		case <-time.After(5 * time.Millisecond):
		}
	}
	h.t.Fatalf("hub did not start listening within 10s; logs:\n%s", h.logs)
}

func (h *testHub) waitReady() {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(h.URL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	h.t.Fatalf("hub at %s not ready within 10s; logs:\n%s", h.URL, h.logs)
}

// Stop cancels run's context and returns what run returned; it is idempotent.
func (h *testHub) Stop() error {
	if h.cancel == nil {
		return nil
	}
	h.cancel()
	h.cancel = nil
	select {
	case err := <-h.done:
		return err
	case <-time.After(30 * time.Second):
		h.t.Errorf("run() did not return within 30s of cancel")
		return fmt.Errorf("run did not return")
	}
}

// Restart stops the hub and runs it again on the same address, as a process restart would.
func (h *testHub) Restart() {
	h.t.Helper()
	if err := h.Stop(); err != nil {
		h.t.Fatalf("stop for restart: %v", err)
	}
	h.start(h.Addr)
}

// Logs returns what the hub has logged so far.
func (h *testHub) Logs() string { return h.logs.String() }

// publish publishes through the Go Publisher and returns the id.
func (h *testHub) publish(topic, typ, data string) string {
	h.t.Helper()
	id, err := h.Pub.Publish(context.Background(), topic, typ, []byte(data))
	if err != nil {
		h.t.Fatalf("Publish(%s, %s) = %v", topic, data, err)
	}
	return id
}

// StreamKey is the Redis key of topic's history.
func (h *testHub) StreamKey(topic string) string { return pubsub.Keys{Prefix: h.Prefix}.Stream(topic) }

// syncBuffer is a bytes.Buffer safe for the writer goroutine and a polling reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Lines returns the buffer's lines.
func (s *syncBuffer) Lines() []string {
	sc := bufio.NewScanner(strings.NewReader(s.String()))
	var out []string
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}
