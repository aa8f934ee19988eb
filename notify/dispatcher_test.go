package notify_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/syncverse/hub/internal/rig"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/syncverse/hub/notify"
	"github.com/syncverse/hub/pubsub"
	"github.com/syncverse/hub/workflow"
)

// receiver is a webhook endpoint that answers with the statuses it is given, then 200, and records every request.
type receiver struct {
	mu       sync.Mutex
	statuses []int
	got      []received
}

type received struct {
	header http.Header
	body   []byte
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.got = append(rc.got, received{r.Header.Clone(), body})
	status := http.StatusOK
	if len(rc.statuses) > 0 {
		status, rc.statuses = rc.statuses[0], rc.statuses[1:]
	}
	rc.mu.Unlock()
	w.WriteHeader(status)
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

type fixture struct {
	out *pubsub.Outbox
}

func newFixture(t *testing.T) *fixture {
	rs := rig.StartRedis(t)
	return &fixture{out: pubsub.NewOutbox(rs.Client(), rig.Prefix(t))}
}

// run starts a dispatcher and stops it when the test ends.
func (f *fixture) run(t *testing.T, cfg notify.Config) *notify.Dispatcher {
	t.Helper()
	if cfg.BackoffMin == 0 {
		cfg.BackoffMin = 20 * time.Millisecond
	}
	if cfg.Consumer == "" {
		cfg.Consumer = "hub-a"
	}
	d := notify.New(f.out, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = d.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return d
}

func note(kind string) workflow.Notification {
	return workflow.Notification{ID: "n-" + kind, Kind: kind, Topic: "deploy.7", Workflow: "wf-1",
		EventID: "1700000000000-0", At: time.Unix(1700000000, 0).UTC(),
		Data: json.RawMessage(`{"workflow":"wf-1","step":"migrate","progress":0.5,"message":"no progress"}`)}
}

func TestDeliveryRetriedUntilAcceptedWithOneDeliveryID(t *testing.T) {
	f := newFixture(t)
	rc := &receiver{statuses: []int{500, 500, 500}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	d := f.run(t, notify.Config{Webhooks: []notify.Webhook{{URL: srv.URL + "/hook", Secret: "s3cret"}}})
	n := note(workflow.Stalled)
	if err := d.Notify(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	if err := d.Notify(context.Background(), n); err != nil { // a second replica queuing the same occurrence
		t.Fatal(err)
	}
	rig.Eventually(t, 10*time.Second, "four tries", func() bool { return len(rc.requests()) >= 4 })
	pending := func() bool { n, err := f.out.Pending(context.Background()); return err == nil && n == 0 }
	rig.Eventually(t, 5*time.Second, "outbox empty", pending)
	got := rc.requests()
	if len(got) != 4 {
		t.Fatalf("receiver got %d requests, want 3 failures and 1 success", len(got))
	}
	id := got[0].header.Get("X-Hub-Delivery")
	for i, r := range got {
		if r.header.Get("X-Hub-Delivery") != id || id == "" {
			t.Errorf("try %d X-Hub-Delivery = %q, want %q on every try", i, r.header.Get("X-Hub-Delivery"), id)
		}
		if ct := r.header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("try %d Content-Type = %q", i, ct)
		}
		mac := hmac.New(sha256.New, []byte("s3cret"))
		mac.Write(r.body)
		if want := "sha256=" + hex.EncodeToString(mac.Sum(nil)); r.header.Get("X-Hub-Signature-256") != want {
			t.Errorf("try %d X-Hub-Signature-256 = %q, want %q", i, r.header.Get("X-Hub-Signature-256"), want)
		}
	}
	var body map[string]any
	if err := json.Unmarshal(got[3].body, &body); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "kind", "topic", "workflow", "event_id", "at", "data"} {
		if _, ok := body[k]; !ok {
			t.Errorf("body %s lacks %q", got[3].body, k)
		}
	}
	if body["kind"] != "stalled" || body["topic"] != "deploy.7" {
		t.Errorf("body = %s, want kind stalled on deploy.7", got[3].body)
	}
}

func TestRefusedDeliveryIsNotRetried(t *testing.T) {
	f := newFixture(t)
	rc := &receiver{statuses: []int{404}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	d := f.run(t, notify.Config{Webhooks: []notify.Webhook{{URL: srv.URL}}})
	if err := d.Notify(context.Background(), note(workflow.Failed)); err != nil {
		t.Fatal(err)
	}
	var dead []string
	rig.Eventually(t, 5*time.Second, "a dead letter", func() bool {
		ms, err := f.out.DeadLetters(context.Background(), 10)
		dead = dead[:0]
		for _, m := range ms {
			dead = append(dead, m.Values["reason"].(string))
		}
		return err == nil && len(ms) == 1
	})
	if !strings.Contains(dead[0], "404") {
		t.Errorf("dead letter reason = %q, want the 404", dead[0])
	}
	if n := len(rc.requests()); n != 1 {
		t.Errorf("receiver got %d requests after a 404, want 1", n)
	}
}

func TestThrottledDeliveryIsRetried(t *testing.T) {
	f := newFixture(t)
	rc := &receiver{statuses: []int{429, 408}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	d := f.run(t, notify.Config{Webhooks: []notify.Webhook{{URL: srv.URL}}})
	if err := d.Notify(context.Background(), note(workflow.Failed)); err != nil {
		t.Fatal(err)
	}
	rig.Eventually(t, 5*time.Second, "429, 408, then delivered", func() bool { return len(rc.requests()) == 3 })
}

// A receiver that is down for a while gets the delivery once it is back, at the same address.
func TestDeliveryWaitsForReceiverToComeBack(t *testing.T) {
	t.Parallel() // it keeps the receiver down for a minute
	const down, backoffMax = time.Minute, 15 * time.Second
	f := newFixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	reg := prometheus.NewRegistry()
	d := f.run(t, notify.Config{Webhooks: []notify.Webhook{{URL: "http://" + addr + "/hook"}}, Timeout: time.Second,
		BackoffMin: time.Second, BackoffMax: backoffMax, Metrics: notify.NewMetrics(reg)})
	if err := d.Notify(context.Background(), note(workflow.Duplicate)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(down) // the outage itself: nothing to wait for but the clock
	retried, _ := rig.MetricValue(rig.Gather(t, reg), "hub_notify_deliveries_total", "outcome=retried")
	if retried < 4 {
		t.Errorf("tries during a minute down = %v, want the backoff to have tried at least 4 times", retried)
	}
	rc := &receiver{}
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen again on %s: %v", addr, err)
	}
	srv := &http.Server{Handler: rc}
	go srv.Serve(ln)
	defer srv.Close()
	rig.Eventually(t, backoffMax+5*time.Second, "delivery after the receiver came back", func() bool { return len(rc.requests()) == 1 })
	t.Logf("delivered after a minute down, %v tries failed before", retried)
}

// A replica that claimed a delivery and died is taken over by another.
func TestAbandonedDeliveryIsTakenOver(t *testing.T) {
	f := newFixture(t)
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	hooks := []notify.Webhook{{URL: srv.URL}}
	ctx := context.Background()
	if err := notify.New(f.out, notify.Config{Webhooks: hooks}).Notify(ctx, note(workflow.Stalled)); err != nil {
		t.Fatal(err)
	}
	cs, err := f.out.Claim(ctx, "hub-dead", 16, time.Hour, 0)
	if err != nil || len(cs) != 1 {
		t.Fatalf("Claim by the replica about to die = %v, %v; want 1 delivery", cs, err)
	}
	f.run(t, notify.Config{Webhooks: hooks, Consumer: "hub-b", Timeout: 100 * time.Millisecond, ClaimAfter: 300 * time.Millisecond})
	rig.Eventually(t, 10*time.Second, "the other replica's delivery", func() bool { return len(rc.requests()) == 1 })
}

func TestRedirectToAnotherHostIsNotFollowed(t *testing.T) {
	f := newFixture(t)
	other := &receiver{}
	otherSrv := httptest.NewServer(other)
	defer otherSrv.Close()
	redir := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, strings.Replace(otherSrv.URL, "127.0.0.1", "localhost", 1), http.StatusTemporaryRedirect)
	}))
	defer redir.Close()
	d := f.run(t, notify.Config{Webhooks: []notify.Webhook{{URL: redir.URL}}})
	if err := d.Notify(context.Background(), note(workflow.Failed)); err != nil {
		t.Fatal(err)
	}
	rig.Eventually(t, 5*time.Second, "a dead letter for the redirect", func() bool {
		ms, err := f.out.DeadLetters(context.Background(), 10)
		return err == nil && len(ms) == 1
	})
	if n := len(other.requests()); n != 0 {
		t.Errorf("the other host got %d requests, want none", n)
	}
}

func TestRetriesEndInADeadLetter(t *testing.T) {
	f := newFixture(t)
	rc := &receiver{statuses: []int{503, 503, 503, 503, 503, 503, 503, 503, 503, 503}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	d := f.run(t, notify.Config{Webhooks: []notify.Webhook{{URL: srv.URL}}, RetryFor: 200 * time.Millisecond})
	if err := d.Notify(context.Background(), note(workflow.Failed)); err != nil {
		t.Fatal(err)
	}
	rig.Eventually(t, 5*time.Second, "a dead letter after retry_for", func() bool {
		ms, err := f.out.DeadLetters(context.Background(), 10)
		return err == nil && len(ms) == 1 && strings.Contains(ms[0].Values["reason"].(string), "gave up")
	})
}

func TestSlackFormat(t *testing.T) {
	f := newFixture(t)
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	d := f.run(t, notify.Config{Webhooks: []notify.Webhook{{URL: srv.URL, Format: notify.FormatSlack,
		Kinds: []string{workflow.Stalled}, Topics: []string{"deploy.*"}}}})
	ctx := context.Background()
	skipped := note(workflow.Failed)
	other := note(workflow.Stalled)
	other.ID, other.Topic = "n-other", "build.1"
	for _, n := range []workflow.Notification{skipped, other, note(workflow.Stalled)} {
		if err := d.Notify(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	rig.Eventually(t, 5*time.Second, "one slack message", func() bool { return len(rc.requests()) == 1 })
	var msg struct{ Text string }
	if err := json.Unmarshal(rc.requests()[0].body, &msg); err != nil {
		t.Fatal(err)
	}
	want := ":hourglass: *stalled*: workflow `wf-1` on topic `deploy.7`, step migrate, 50%: no progress"
	if msg.Text != want {
		t.Errorf("slack text = %q, want %q", msg.Text, want)
	}
}

func TestWebhookValidate(t *testing.T) {
	for _, tc := range []struct {
		hook notify.Webhook
		want string
	}{
		{notify.Webhook{URL: "https://hooks.example.com/x"}, ""},
		{notify.Webhook{}, "url is empty"},
		{notify.Webhook{URL: "ftp://h/x"}, "scheme must be http or https"},
		{notify.Webhook{URL: "http:///x"}, "has no host"},
		{notify.Webhook{URL: "https://u:p@h/x"}, "credentials belong in secret"},
		{notify.Webhook{URL: "https://h/x", Format: "xml"}, `format "xml"`},
		{notify.Webhook{URL: "https://h/x", Kinds: []string{"paged"}}, `kind "paged"`},
		{notify.Webhook{URL: "https://h/x", Topics: []string{"a*b"}}, "topics:"},
		{notify.Webhook{URL: "://bad"}, "url:"},
	} {
		err := tc.hook.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Validate(%+v) = %v, want %q", tc.hook, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), ":p@") {
			t.Errorf("Validate(%+v) = %v names the password", tc.hook, err)
		}
	}
}
