// Package hubtest runs the hub program for end-to-end tests: in-process through app.Run on a loopback port, against
// a test's Redis with a key prefix of its own (Start), or with nothing but a deployment's environment (RunDeployed).
package hubtest

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/internal/app"
	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/pubsub"
)

// Hub is the real program, run through app.Run on a loopback port. Start wires it to a test's Redis with a
// key prefix of its own; RunDeployed gives it nothing but the environment a deployment would (a cluster or sentinel
// URL, TLS files, h2c).
type Hub struct {
	t      testing.TB
	URL    string // http://127.0.0.1:PORT, or https://… with TLS
	Addr   string
	Redis  *rig.Redis // nil for RunDeployed
	Prefix string
	RDB    *redis.Client
	Pub    *pubsub.Publisher

	Env    map[string]string // the whole environment it runs with
	Output *rig.SyncBuffer   // what the hub logged (its stderr) since it last started
	background
}

// Start runs the hub against rs with a key prefix of its own; env holds extra "KEY=VALUE" settings
// (HUB_SSE_HEARTBEAT=200ms, ...). It is stopped when the test ends.
func Start(t testing.TB, rs *rig.Redis, env ...string) *Hub {
	t.Helper()
	return StartOn(t, rs, "127.0.0.1:0", env...)
}

// StartOn is Start on a listen address of the test's choice.
func StartOn(t testing.TB, rs *rig.Redis, listen string, env ...string) *Hub {
	t.Helper()
	prefix := "t" + strings.ReplaceAll(fmt.Sprint(time.Now().UnixNano()), "-", "")
	vars := rig.WithEnv(map[string]string{"HUB_REDIS_URL": rs.URL(), "HUB_REDIS_PREFIX": prefix}, env)
	h := New(t, vars)
	h.Redis, h.Prefix, h.RDB = rs, prefix, rs.Client()
	h.Pub = pubsub.NewPublisher(h.RDB, pubsub.PublisherConfig{Prefix: h.Prefix})
	h.Start(listen)
	t.Cleanup(func() { _ = h.Stop() })
	return h
}

// RunDeployed runs the hub with env as its whole environment; app.Run must return nil when the test ends.
func RunDeployed(t testing.TB, env map[string]string) *Hub {
	t.Helper()
	h := New(t, env)
	h.Start("127.0.0.1:0")
	t.Cleanup(func() {
		if err := h.Stop(); err != nil {
			t.Errorf("app.Run = %v", err)
		}
	})
	return h
}

// New is a hub with env as its whole environment, not started yet (Start starts it).
func New(t testing.TB, env map[string]string) *Hub {
	h := &Hub{t: t, Env: map[string]string{"HUB_LOG_LEVEL": "info", "HUB_SHUTDOWN_TIMEOUT": "5s"}}
	for k, v := range env {
		h.Env[k] = v
	}
	return h
}

func (h *Hub) Getenv(k string) string { return h.Env[k] }

// Start runs the hub on listen and returns once it answers /readyz; app.Run says where it listens.
func (h *Hub) Start(listen string) {
	h.t.Helper()
	h.Output = &rig.SyncBuffer{}
	urls := make(chan string, 1)
	h.background = goRun(func(ctx context.Context) error {
		return app.Run(ctx, app.Env{Args: []string{"serve", "--listen", listen}, Getenv: h.Getenv,
			Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: h.Output, Listening: func(url string) { urls <- url }})
	})
	select {
	case h.URL = <-urls:
		h.Addr = h.URL[strings.Index(h.URL, "://")+3:]
		h.WaitReady(15 * time.Second)
	case err := <-h.done:
		h.returned()
		h.t.Fatalf("app.Run returned before listening: %v\nlogs:\n%s", err, h.Output)
	case <-time.After(15 * time.Second):
		h.t.Fatalf("hub did not start listening within 15s; logs:\n%s", h.Output)
	}
}

// client is an HTTP client for the hub; it trusts any certificate, since the tests' are self-signed.
func (h *Hub) Client() *http.Client {
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
}

// waitReady waits until /readyz answers 200.
func (h *Hub) WaitReady(within time.Duration) {
	h.t.Helper()
	c := h.Client()
	defer c.CloseIdleConnections()
	rig.Eventually(h.t, within, "hub at "+h.URL+" ready", func() bool {
		resp, err := c.Get(h.URL + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// Stop cancels run's context and returns what run returned; it is idempotent.
func (h *Hub) Stop() error { return h.stop(h.t, 30*time.Second) }

// Restart stops the hub and runs it again on the same address, as a process restart would.
func (h *Hub) Restart() {
	h.t.Helper()
	if err := h.Stop(); err != nil {
		h.t.Fatalf("stop for restart: %v", err)
	}
	h.Start(h.Addr)
}

// Logs returns what the hub has logged so far.
func (h *Hub) Logs() string { return h.Output.String() }

// publish publishes through the Go Publisher and returns the id.
func (h *Hub) Publish(topic, typ, data string) string {
	h.t.Helper()
	id, err := h.Pub.Publish(context.Background(), topic, typ, []byte(data))
	if err != nil {
		h.t.Fatalf("Publish(%s, %s) = %v", topic, data, err)
	}
	return id
}

// StreamKey is the Redis key of topic's history.
func (h *Hub) StreamKey(topic string) string { return pubsub.Keys{Prefix: h.Prefix}.Stream(topic) }

// EventData is the data of the i-th event of a test's workflow: one JSON object that tells events apart.
func EventData(i int) string { return fmt.Sprintf(`{"workflow":"wf-1","seq":%d}`, i) }
