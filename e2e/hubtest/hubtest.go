package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/internal/redistest"
	"github.com/syncverse/hub/internal/testutil"
	"github.com/syncverse/hub/pubsub"
)

// testHub is the real program, run through run() on a loopback port. startHub wires it to a test's Redis with a
// key prefix of its own; runDeployed gives it nothing but the environment a deployment would (a cluster or sentinel
// URL, TLS files, h2c).
type testHub struct {
	t      testing.TB
	URL    string // http://127.0.0.1:PORT, or https://… with TLS
	Addr   string
	Redis  *redistest.Server // nil for runDeployed
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
	prefix := "t" + strings.ReplaceAll(fmt.Sprint(time.Now().UnixNano()), "-", "")
	vars := map[string]string{"HUB_REDIS_URL": rs.URL(), "HUB_REDIS_PREFIX": prefix}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	h := newTestHub(t, vars)
	h.Redis, h.Prefix, h.RDB = rs, prefix, rs.Client()
	h.Pub = pubsub.NewPublisher(h.RDB, pubsub.PublisherConfig{Prefix: h.Prefix})
	h.start(listen)
	t.Cleanup(func() { _ = h.Stop() })
	return h
}

// runDeployed runs the hub with env as its whole environment; run() must return nil when the test ends.
func runDeployed(t testing.TB, env map[string]string) *testHub {
	t.Helper()
	h := newTestHub(t, env)
	h.start("127.0.0.1:0")
	t.Cleanup(func() {
		if err := h.Stop(); err != nil {
			t.Errorf("run() = %v", err)
		}
	})
	return h
}

func newTestHub(t testing.TB, env map[string]string) *testHub {
	h := &testHub{t: t, env: map[string]string{"HUB_LOG_LEVEL": "info", "HUB_SHUTDOWN_TIMEOUT": "5s"}}
	for k, v := range env {
		h.env[k] = v
	}
	return h
}

func (h *testHub) getenv(k string) string { return h.env[k] }

// start runs the hub on listen and returns once it answers /readyz; run() says where it listens.
func (h *testHub) start(listen string) {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h.logs = &syncBuffer{}
	h.cancel, h.done = cancel, make(chan error, 1)
	urls := make(chan string, 1)
	go func() {
		h.done <- run(ctx, []string{"serve", "--listen", listen}, h.getenv, strings.NewReader(""), io.Discard, h.logs,
			func(url string) { urls <- url })
	}()
	select {
	case h.URL = <-urls:
		h.Addr = h.URL[strings.Index(h.URL, "://")+3:]
		h.waitReady(15 * time.Second)
	case err := <-h.done:
		h.cancel = nil
		h.t.Fatalf("run() returned before listening: %v\nlogs:\n%s", err, h.logs)
	case <-time.After(15 * time.Second):
		h.t.Fatalf("hub did not start listening within 15s; logs:\n%s", h.logs)
	}
}

// client is an HTTP client for the hub; it trusts any certificate, since the tests' are self-signed.
func (h *testHub) client() *http.Client {
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
}

// waitReady waits until /readyz answers 200.
func (h *testHub) waitReady(within time.Duration) {
	h.t.Helper()
	c := h.client()
	defer c.CloseIdleConnections()
	testutil.Eventually(h.t, within, "hub at "+h.URL+" ready", func() bool {
		resp, err := c.Get(h.URL + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
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
