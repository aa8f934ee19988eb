package chaos

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/workflow"
)

// hookReceiver is the on-call's webhook endpoint: it checks every signature, records every POST, and holds the
// first request open while hold is set.
type hookReceiver struct {
	t      *testing.T
	secret string
	srv    *httptest.Server
	mu     sync.Mutex
	posts  []hookPost
	hold   chan struct{} // while not nil, the first request waits for it to close
}

type hookPost struct {
	delivery string
	body     workflow.Notification
}

func newHookReceiver(t *testing.T, secret string) *hookReceiver {
	rc := &hookReceiver{t: t, secret: secret}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(func() {
		rc.release()
		rc.srv.Close()
	})
	return rc
}

func (rc *hookReceiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	mac := hmac.New(sha256.New, []byte(rc.secret))
	mac.Write(body)
	if got, want := r.Header.Get("X-Hub-Signature-256"), "sha256="+hex.EncodeToString(mac.Sum(nil)); got != want {
		rc.t.Errorf("webhook X-Hub-Signature-256 = %q, want %q", got, want)
	}
	var n workflow.Notification
	if err := json.Unmarshal(body, &n); err != nil {
		rc.t.Errorf("webhook body %s: %v", body, err)
	}
	rc.mu.Lock()
	rc.posts = append(rc.posts, hookPost{r.Header.Get("X-Hub-Delivery"), n})
	hold := rc.hold
	first := len(rc.posts) == 1
	rc.mu.Unlock()
	if hold != nil && first {
		select {
		case <-hold:
		case <-r.Context().Done():
		}
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (rc *hookReceiver) release() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.hold != nil {
		close(rc.hold)
		rc.hold = nil
	}
}

// count returns how many POSTs told kind of wf.
func (rc *hookReceiver) count(kind, wf string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	n := 0
	for _, p := range rc.posts {
		if p.body.Kind == kind && p.body.Workflow == wf {
			n++
		}
	}
	return n
}

func (rc *hookReceiver) all() []hookPost {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hookPost(nil), rc.posts...)
}

// verdictsOf counts the health events of each verdict on wf stored in topic's stream.
func (r *scenario) verdictsOf(topic, wf string) map[string]int {
	r.t.Helper()
	entries, err := r.rdb.XRange(context.Background(), r.keys.Stream(topic), "-", "+").Result()
	if err != nil {
		r.t.Fatalf("XRANGE %s: %v", topic, err)
	}
	out := map[string]int{}
	for _, e := range entries {
		if e.Values["t"] != workflow.EventType {
			continue
		}
		var h workflow.Health
		if err := json.Unmarshal([]byte(e.Values["d"].(string)), &h); err != nil {
			r.t.Fatalf("health event %s: %v", e.ID, err)
		}
		if h.Workflow == wf {
			out[h.Verdict]++
		}
	}
	return out
}

func (r *scenario) agent(topic, typ, data string) {
	r.t.Helper()
	if _, err := r.publisher(10000).Publish(context.Background(), topic, typ, []byte(data)); err != nil {
		r.t.Fatalf("Publish(%s, %s) = %v", topic, data, err)
	}
}

// lookAWhile gives both hubs several sweeps in which nothing more may happen: the way to see that a verdict is not
// repeated is to look for a while.
func lookAWhile() { time.Sleep(time.Second) }

const stallAfter = 2 * time.Second

func healthEnv(hookURL string) []string {
	return []string{"HUB_WORKFLOWS_STALL_AFTER=" + stallAfter.String(), "HUB_WORKFLOWS_SWEEP=100ms",
		"HUB_NOTIFY_WEBHOOK_URL=" + hookURL, "HUB_NOTIFY_WEBHOOK_SECRET=s3cret", "HUB_NOTIFY_TIMEOUT=2s"}
}

// Two hub processes on one Redis judge the same workflows: each occurrence is one health event in the stream and
// one signed webhook POST, and a restart of both hubs during a stall repeats nothing.
func TestWorkflowVerdictsOnceAcrossTwoHubs(t *testing.T) {
	r := newRig(t, rig.RedisOptions{})
	rc := newHookReceiver(t, "s3cret")
	hubs := []*rig.Hub{r.startHub(r.redis.Addr, healthEnv(rc.srv.URL)...), r.startHub(r.redis.Addr, healthEnv(rc.srv.URL)...)}

	last := time.Now()
	r.agent("hv.deploy", "progress", `{"workflow":"s","status":"running","step":"migrate"}`)
	if err := poll(stallAfter+2*time.Second, func() (bool, string) { return rc.count(workflow.Stalled, "s") > 0, "no stalled POST" }); err != nil {
		t.Fatalf("stall of s within stall_after + 2 s: %v", err)
	}
	t.Logf("stalled POST %v after the last event", time.Since(last).Round(10*time.Millisecond))
	lookAWhile()
	if got := r.verdictsOf("hv.deploy", "s"); got[workflow.Stalled] != 1 || rc.count(workflow.Stalled, "s") != 1 {
		t.Fatalf("stall of s: %v health events, %d POSTs; want 1 and 1", got, rc.count(workflow.Stalled, "s"))
	}

	r.agent("hv.deploy", "progress", `{"workflow":"s","status":"running","step":"seed"}`)
	if err := poll(5*time.Second, func() (bool, string) { return rc.count(workflow.Recovered, "s") > 0, "no recovered POST" }); err != nil {
		t.Fatal(err)
	}
	r.agent("hv.deploy", "progress", `{"workflow":"s","status":"succeeded"}`)

	r.agent("hv.ci", "progress", `{"workflow":"f","status":"running"}`)
	r.agent("hv.ci", "progress", `{"workflow":"f","status":"failed","message":"exit 2"}`)
	r.agent("hv.saga", "progress", `{"workflow":"A","status":"running"}`)
	r.agent("hv.saga", "lock", `{"key":"project-42","holder":"agent-a","fence":7,"state":"acquired","workflow":"A","ttl_ms":30000}`)
	r.agent("hv.saga", "progress", `{"workflow":"B","status":"running"}`)
	r.agent("hv.saga", "lock", `{"key":"project-42","holder":"agent-b","fence":8,"state":"acquired","workflow":"B","ttl_ms":30000}`)
	if err := poll(5*time.Second, func() (bool, string) {
		return rc.count(workflow.Failed, "f") > 0 && rc.count(workflow.Duplicate, "B") > 0, "no failed or duplicate POST"
	}); err != nil {
		t.Fatal(err)
	}
	// The replicas' counters, scraped over HTTP, add up to one count per occurrence.
	if err := poll(5*time.Second, func() (bool, string) {
		sum := func(series string) float64 { return metric(t, hubs[0], series) + metric(t, hubs[1], series) }
		got := fmt.Sprint(sum(`hub_workflow_verdicts_total{verdict="stalled"}`), sum(`hub_workflow_verdicts_total{verdict="recovered"}`),
			sum(`hub_workflow_verdicts_total{verdict="duplicate"}`), sum(`hub_notify_deliveries_total{outcome="delivered"}`))
		return got == "1 1 1 4", "verdicts stalled, recovered, duplicate and deliveries = " + got + ", want 1 1 1 4"
	}); err != nil {
		t.Error(err)
	}
	// A and B end before they could stall; then both hubs restart while x is stalled.
	r.agent("hv.saga", "progress", `{"workflow":"A","status":"succeeded"}`)
	r.agent("hv.saga", "progress", `{"workflow":"B","status":"succeeded"}`)
	r.agent("hv.deploy", "progress", `{"workflow":"x","status":"running"}`)
	if err := poll(stallAfter+2*time.Second, func() (bool, string) { return rc.count(workflow.Stalled, "x") > 0, "no stalled POST for x" }); err != nil {
		t.Fatal(err)
	}
	for i, h := range hubs {
		h.Stop()
		hubs[i] = r.startHub(r.redis.Addr, healthEnv(rc.srv.URL)...)
	}
	lookAWhile()
	for _, c := range []struct {
		topic, wf, verdict string
		want               int
	}{
		{"hv.deploy", "s", workflow.Stalled, 1}, {"hv.deploy", "s", workflow.Recovered, 1},
		{"hv.saga", "B", workflow.Duplicate, 1}, {"hv.saga", "A", workflow.Duplicate, 0},
		{"hv.deploy", "x", workflow.Stalled, 1}, {"hv.ci", "f", workflow.Stalled, 0},
	} {
		if got := r.verdictsOf(c.topic, c.wf)[c.verdict]; got != c.want {
			t.Errorf("%s/%s: %d %s health events, want %d", c.topic, c.wf, got, c.verdict, c.want)
		}
	}
	for _, c := range []struct {
		kind, wf string
	}{{workflow.Stalled, "s"}, {workflow.Recovered, "s"}, {workflow.Failed, "f"}, {workflow.Duplicate, "B"}, {workflow.Stalled, "x"}} {
		if got := rc.count(c.kind, c.wf); got != 1 {
			t.Errorf("%s of %s: %d POSTs, want 1", c.kind, c.wf, got)
		}
	}
	if n := len(rc.all()); n != 5 {
		t.Errorf("webhook got %d POSTs in all, want 5: %+v", n, rc.all())
	}
}

// A hub SIGKILLed while its webhook request is in flight leaves the delivery claimed; the other replica takes it
// over and delivers it, with the same X-Hub-Delivery.
func TestNotificationTakenOverFromAKilledHub(t *testing.T) {
	r := newRig(t, rig.RedisOptions{})
	rc := newHookReceiver(t, "s3cret")
	rc.hold = make(chan struct{})
	env := append(healthEnv(rc.srv.URL), "HUB_NOTIFY_TIMEOUT=4s", "HUB_NOTIFY_CLAIM_AFTER=8s")
	a := r.startHub(r.redis.Addr, env...)
	r.agent("hv.kill", "progress", `{"workflow":"k","status":"failed"}`)
	if err := poll(5*time.Second, func() (bool, string) { return len(rc.all()) == 1, "no first POST" }); err != nil {
		t.Fatal(err)
	}
	a.Kill()
	killed := time.Now()
	r.startHub(r.redis.Addr, env...)
	if err := poll(15*time.Second, func() (bool, string) { return len(rc.all()) == 2, "no POST from the other hub" }); err != nil {
		t.Fatal(err)
	}
	t.Logf("taken over %v after the kill", time.Since(killed).Round(10*time.Millisecond))
	posts := rc.all()
	if posts[0].delivery != posts[1].delivery || posts[0].body.ID != posts[1].body.ID {
		t.Errorf("deliveries %q and %q: want the same delivery taken over", posts[0].delivery, posts[1].delivery)
	}
}
