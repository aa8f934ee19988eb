package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/pubsub"
)

// Every publishing path (Go Publisher, hub publish, the script through EVAL, POST /publish) reaches a browser
// with the id, type and data that were published.
func TestPublishPathsReachSSEClient(t *testing.T) {
	rs := rig.StartRedis(t)
	h := hubtest.Start(t, rs)
	c := rig.OpenStream(t, h.URL, rig.TopicQuery("paths"), "0-0")
	if c.Status != http.StatusOK {
		t.Fatalf("GET /events = %d %s", c.Status, c.Body)
	}
	for k, want := range map[string]string{"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"} {
		if got := c.Header.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	if enc := c.Header.Get("Content-Encoding"); enc != "" {
		t.Errorf("Content-Encoding = %q, want none", enc)
	}
	first := c.Next(2 * time.Second)
	if ms, err := strconv.Atoi(first.Retry); err != nil || ms < 1500 || ms >= 4500 {
		t.Errorf("first frame = %+v, want a retry hint in [1500, 4500) ms", first)
	}

	type sent struct{ id, typ, data string }
	var want []sent
	want = append(want, sent{h.Publish("paths", "progress", `{"workflow":"go","progress":0.5}`), "progress", `{"workflow":"go","progress":0.5}`})

	var out, errb bytes.Buffer
	err := hubtest.Run(context.Background(), []string{"publish", "--topic", "paths", "--type", "build.log", "--data", `{"workflow":"cli"}`},
		h.Getenv, strings.NewReader(""), &out, &errb, nil)
	if err != nil {
		t.Fatalf("hub publish: %v (%s)", err, errb.String())
	}
	want = append(want, sent{strings.TrimSpace(out.String()), "build.log", `{"workflow":"cli"}`})

	out.Reset()
	err = hubtest.Run(context.Background(), []string{"publish", "--topic", "paths"}, h.Getenv, strings.NewReader(`{"workflow":"stdin"}`+"\n"), &out, &errb, nil)
	if err != nil {
		t.Fatalf("hub publish (stdin): %v (%s)", err, errb.String())
	}
	want = append(want, sent{strings.TrimSpace(out.String()), "progress", `{"workflow":"stdin"}`})

	want = append(want, sent{evalScript(t, h, "paths", "progress", `{"workflow":"eval"}`), "progress", `{"workflow":"eval"}`})

	resp, err := http.Post(h.URL+"/publish", "application/json", strings.NewReader(`{"topic":"paths","type":"deploy","data":{"workflow":"http","n":[1,2]}}`))
	if err != nil {
		t.Fatalf("POST /publish: %v", err)
	}
	var body struct{ ID string }
	_ = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || body.ID == "" {
		t.Fatalf("POST /publish = %d id %q, want 202 with an id", resp.StatusCode, body.ID)
	}
	want = append(want, sent{body.ID, "deploy", `{"workflow":"http","n":[1,2]}`})

	got := c.Events(len(want), 5*time.Second)
	for i, w := range want {
		if got[i].ID != w.id || got[i].Event != w.typ || got[i].Data != w.data {
			t.Errorf("event %d = id %q event %q data %q, want id %q event %q data %q", i, got[i].ID, got[i].Event, got[i].Data, w.id, w.typ, w.data)
		}
	}
}

// evalScript runs the publish script with a plain EVAL and the README's arguments, as any Redis client would
// (TestREADMERedisCliExamplePublishes runs the README's redis-cli command itself).
func evalScript(t *testing.T, h *hubtest.Hub, topic, typ, data string) string {
	t.Helper()
	k := pubsub.Keys{Prefix: h.Prefix}
	id, err := h.RDB.Eval(context.Background(), pubsub.PublishScript, []string{k.Stream(topic), k.State(topic)},
		k.Channel(topic), typ, data, 10000, 65536, "").Text()
	if err != nil {
		t.Fatalf("EVAL publish script: %v", err)
	}
	return id
}

// A publish command that breaks a rule is refused with a clear error, and nothing reaches Redis. The same rules
// over HTTP are internal/server's TestBadPublishesAreRefused.
func TestBadPublishCommandsAreRefused(t *testing.T) {
	rs := rig.StartRedis(t)
	h := hubtest.Start(t, rs, "HUB_LIMITS_MAX_EVENT_BYTES=1024", "HUB_LIMITS_MAX_BODY_BYTES=2048")
	big := `{"blob":"` + strings.Repeat("x", 1100) + `"}`
	cli := []struct {
		args   []string
		errHas string
	}{
		{[]string{"--topic", "t", "--data", "{nope"}, "not one valid JSON value"},
		{[]string{"--topic", "a b", "--data", "1"}, "invalid topic"},
		{[]string{"--topic", "t", "--type", "Bad", "--data", "1"}, "invalid event type"},
		{[]string{"--topic", "t", "--data", big}, "too large"},
		{[]string{"--topic", "t", "--type", "auth-expired", "--data", "1"}, "the hub's own"},
		{[]string{"--topic", "t", "--data", `"\ud800"`}, "surrogate"},
		{[]string{"--topic", "t", "--idempotency-key", "a b", "--data", "1"}, "idempotency key"},
	}
	for _, tc := range cli {
		var out, errb bytes.Buffer
		err := hubtest.Run(context.Background(), append([]string{"publish"}, tc.args...), h.Getenv, strings.NewReader(""), &out, &errb, nil)
		if err == nil || !strings.Contains(err.Error(), tc.errHas) {
			t.Errorf("hub publish %v = %v, want an error with %q", tc.args, err, tc.errHas)
		}
	}
	var errb bytes.Buffer
	if err := hubtest.Run(context.Background(), []string{"publish", "--data", "1"}, h.Getenv, strings.NewReader(""), &bytes.Buffer{}, &errb, nil); err != errUsage {
		t.Errorf("hub publish without --topic = %v, want the usage error (exit 2)", err)
	}
	n, err := h.RDB.Exists(context.Background(), h.StreamKey("t"), h.StreamKey("a b")).Result()
	if err != nil || n != 0 {
		t.Errorf("after refused publishes, %d streams exist (err %v), want 0", n, err)
	}
}

// Garbage published straight onto a live channel is dropped and counted; the hub keeps serving.
func TestGarbageOnLiveChannelIsDropped(t *testing.T) {
	rs := rig.StartRedis(t)
	h := hubtest.Start(t, rs, "HUB_LIMITS_MAX_EVENT_BYTES=1024")
	c := rig.OpenStream(t, h.URL, rig.TopicQuery("g"), "0-0")
	c.Next(2 * time.Second) // retry
	ctx := context.Background()
	ch := pubsub.Keys{Prefix: h.Prefix}.Channel("g")
	rig.WaitMetric(t, h.URL, 1, 5*time.Second, "hub_redis_followed_topics")
	// The stream is live once a stored event has come through. Before that, the replay could still read the stream
	// after the event below is published and deliver it ahead of the ephemeral one, which has no place in the stream.
	first := h.Publish("g", "progress", hubtest.EventData(0))
	if got := c.NextEvent(5 * time.Second); got.ID != first {
		t.Fatalf("first event = %+v, want id %s", got, first)
	}
	for _, msg := range []string{"not json{", `{"blob":"` + strings.Repeat("x", 1500) + `"}`, `{"id":"1-0","prev":"0-0","type":"Bad Type","data":{}}`} {
		if err := h.RDB.Publish(ctx, ch, msg).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.RDB.Publish(ctx, ch, `{"note":"ephemeral"}`).Err(); err != nil {
		t.Fatal(err)
	}
	id := h.Publish("g", "progress", hubtest.EventData(1))
	// An ephemeral event has no place in the stream, so nothing orders it against a stored one: a tail check that
	// reads the stored event from the stream may deliver it first. Each must come once, the ephemeral without id.
	got := c.Events(2, 5*time.Second)
	if got[1].HasID {
		got[0], got[1] = got[1], got[0]
	}
	if got[1].HasID || got[1].Data != `{"note":"ephemeral"}` {
		t.Errorf("events %+v: want the ephemeral event once, without id", got)
	}
	if got[0].ID != id || got[0].Data != hubtest.EventData(1) {
		t.Errorf("events %+v: want the stored event id %s data %s once", got, id, hubtest.EventData(1))
	}
	fams := rig.Scrape(t, h.URL)
	rig.WantByLabel(t, fams, "hub_events_dropped_total", "reason", map[string]float64{"invalid_json": 1, "too_large": 1, "bad_type": 1})
	if v, _ := rig.MetricValue(fams, "hub_events_received_total", "source=ephemeral"); v != 1 {
		t.Errorf("hub_events_received_total{source=ephemeral} = %v, want 1", v)
	}
	if !strings.Contains(h.Logs(), "dropped event") {
		t.Errorf("no log line about the dropped events; logs:\n%s", h.Logs())
	}
	_ = fmt.Sprint
}

// hub publish gives every event an idempotency key: a fresh one (shown with --verbose) or --idempotency-key's, with
// which a second run stores nothing, prints the first id and says so.
func TestPublishCommandIdempotencyKey(t *testing.T) {
	rs := rig.StartRedis(t)
	h := hubtest.Start(t, rs)
	publish := func(args ...string) (string, string) {
		var out, errb bytes.Buffer
		args = append([]string{"publish", "--topic", "cli.idem", "--data", `{"workflow":"cli"}`}, args...)
		if err := hubtest.Run(context.Background(), args, h.Getenv, strings.NewReader(""), &out, &errb, nil); err != nil {
			t.Fatalf("hub %v = %v\n%s", args, err, errb.String())
		}
		return strings.TrimSpace(out.String()), errb.String()
	}
	_, verbose := publish("--verbose")
	if !regexp.MustCompile(`idempotency key [A-Z2-7]{26}, 0 retries`).MatchString(verbose) {
		t.Errorf("hub publish --verbose printed %q on stderr, want the generated key", verbose)
	}
	first, note := publish("--idempotency-key", "deploy-7/start")
	again, noteAgain := publish("--idempotency-key", "deploy-7/start")
	if first == "" || again != first || note != "" || !strings.Contains(noteAgain, "published before as "+first) {
		t.Errorf("hub publish with one key twice = %q (%q), %q (%q); want the same id, the second run saying so", first, note, again, noteAgain)
	}
	if n, err := h.RDB.XLen(context.Background(), h.StreamKey("cli.idem")).Result(); err != nil || n != 2 {
		t.Errorf("XLEN after three runs, two with one key = %d, %v; want 2", n, err)
	}
}
