package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/config"
	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/pubsub"
)

// The README's first command: the hub with the embedded Redis and the demo agents, no Redis installed. Within a few
// seconds a client sees workflow progress and the agents' lock events.
func TestDemoWithEmbeddedRedis(t *testing.T) {
	env := map[string]string{"HUB_REDIS_EMBEDDED_ADDR": "127.0.0.1:0", "HUB_LOG_LEVEL": "warn"}
	base := hubtest.Serve(t, []string{"--demo", "--listen", "127.0.0.1:0"}, env).URL
	c := rig.OpenStream(t, base, rig.TopicQuery("demo"), "0-0")
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
	rs := rig.StartRedis(t)
	prefix := rig.Prefix(t)
	env := map[string]string{"HUB_REDIS_URL": rs.URL(), "HUB_REDIS_PREFIX": prefix, "HUB_LOG_LEVEL": "warn"}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	logs := &rig.SyncBuffer{}
	go func() {
		done <- hubtest.Run(ctx, []string{"demo"}, func(k string) string { return env[k] }, strings.NewReader(""), io.Discard, logs, nil)
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
	err := hubtest.Run(context.Background(), []string{"demo"}, func(string) string { return "" }, strings.NewReader(""), io.Discard, &stderr, nil)
	if err == nil || !strings.Contains(err.Error(), "HUB_REDIS_URL") {
		t.Errorf("hub demo without redis.url = %v, want an error naming HUB_REDIS_URL", err)
	}
}

// The README's first command on a busy machine: with the demo's default ports taken (held here, or by whatever
// else holds them), the hub and its embedded Redis move to free ports, each move is a warning naming the new
// address, and the demo streams as before.
func TestDemoStartsOnBusyPorts(t *testing.T) {
	for _, addr := range []string{config.Default().Listen, config.Default().Redis.EmbeddedAddr} {
		if ln, err := net.Listen("tcp", addr); err == nil {
			t.Cleanup(func() { ln.Close() })
		} // else something else holds it: busy either way
	}
	demo := hubtest.Serve(t, []string{"--demo"}, map[string]string{})
	base, logs := demo.URL, demo.Stderr
	if strings.HasSuffix(base, ":8080") {
		t.Fatalf("the demo listens on %s, which the test holds", base)
	}
	for _, want := range []string{"the default listen address is taken", "the embedded Redis's default address is taken"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs lack the warning %q:\n%s", want, logs)
		}
	}
	if !strings.Contains(logs.String(), strings.TrimPrefix(base, "http://")) {
		t.Errorf("logs do not name the address the hub moved to (%s):\n%s", base, logs)
	}
	c := rig.OpenStream(t, base, rig.TopicQuery("demo"), "0-0")
	if f := c.NextEvent(10 * time.Second); f.Event == "" {
		t.Errorf("no demo event from the moved hub")
	}
}

// Without --demo, or with an address the operator chose, a taken port stops the hub with an error naming the
// setting that moves it.
func TestTakenPortNamesTheSetting(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	taken := held.Addr().String()
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"listen", []string{"serve", "--listen", taken}, map[string]string{"HUB_REDIS_EMBEDDED_ADDR": "127.0.0.1:0"}, "move the hub with --listen ADDR (HUB_LISTEN"},
		{"listen chosen with --demo", []string{"--demo", "--listen", taken}, map[string]string{"HUB_REDIS_EMBEDDED_ADDR": "127.0.0.1:0"}, "move the hub with --listen"},
		{"embedded redis", []string{"serve", "--listen", "127.0.0.1:0"}, map[string]string{"HUB_REDIS_EMBEDDED_ADDR": taken}, "move the embedded Redis with redis.embedded_addr (HUB_REDIS_EMBEDDED_ADDR)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.env["HUB_LOG_LEVEL"] = "warn"
			err := hubtest.Run(t.Context(), tc.args, func(k string) string { return tc.env[k] }, strings.NewReader(""), io.Discard, io.Discard, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), taken) {
				t.Errorf("hub %v with %s taken = %v, want an error naming it and %q", tc.args, taken, err, tc.want)
			}
		})
	}
}
