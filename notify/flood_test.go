package notify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/notify"
	"github.com/syncverse/hub/pubsub"
	"github.com/syncverse/hub/workflow"
)

// slowReceiver takes its time over each request, answers status, and records when each notification came.
type slowReceiver struct {
	delay  time.Duration
	status int
	mu     sync.Mutex
	got    []workflow.Notification
	at     []time.Time
}

func (rc *slowReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var n workflow.Notification
	_ = json.Unmarshal(body, &n)
	rc.mu.Lock()
	rc.got = append(rc.got, n)
	rc.at = append(rc.at, time.Now())
	rc.mu.Unlock()
	select {
	case <-time.After(rc.delay):
	case <-r.Context().Done():
	}
	w.WriteHeader(rc.status)
}

// first returns the first notification received on topic and when it came.
func (rc *slowReceiver) first(topic string) (workflow.Notification, time.Time, bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for i, n := range rc.got {
		if n.Topic == topic {
			return n, rc.at[i], true
		}
	}
	return workflow.Notification{}, time.Time{}, false
}

func (rc *slowReceiver) all() []workflow.Notification {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]workflow.Notification(nil), rc.got...)
}

func floodNote(topic string, i int, data string) workflow.Notification {
	return workflow.Notification{ID: fmt.Sprintf("%s-%d", topic, i), Kind: workflow.Failed, Topic: topic,
		Workflow: fmt.Sprintf("wf-%d", i), At: time.Now().UTC(), Data: json.RawMessage(data)}
}

func floodFixture(t *testing.T, rc http.Handler, cfg notify.Config) (*notify.Dispatcher, *pubsub.Outbox, *prometheus.Registry) {
	t.Helper()
	rs := rig.StartRedisWith(t, rig.RedisOptions{})
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	f := &fixture{out: pubsub.NewOutbox(rs.Client(), rig.Prefix(t))}
	reg := prometheus.NewRegistry()
	cfg.Webhooks = []notify.Webhook{{URL: srv.URL}}
	cfg.Metrics = notify.NewMetrics(reg)
	return f.run(t, cfg), f.out, reg
}

// A flood of failures on one topic, to a receiver that takes a second per request: the flood becomes a few
// deliveries that say how many failures each stands for, each carrying its data cut to max_data_bytes, and another
// topic's first alert goes out within seconds, not behind the flood.
func TestFloodOnOneTopicDoesNotDelayAnotherTopicsFirstAlert(t *testing.T) {
	rc := &slowReceiver{delay: time.Second, status: http.StatusOK}
	d, out, reg := floodFixture(t, rc, notify.Config{MaxDataBytes: 1024, MaxPending: 100, Timeout: 5 * time.Second})
	ctx := context.Background()
	big := fmt.Sprintf(`{"status":"failed","title":"nightly","message":%q,"blob":%q}`,
		strings.Repeat("m", 4000), strings.Repeat("b", 60<<10))
	const flood = 300
	for i := range flood {
		if err := d.Notify(ctx, floodNote("project.1", i, big)); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := out.Pending(ctx); err != nil || n > 10 {
		t.Errorf("outbox after %d failures on one topic: %d deliveries (%v); want the flood folded into a few", flood, n, err)
	}
	sent := time.Now()
	if err := d.Notify(ctx, floodNote("project.2", 0, `{"status":"failed"}`)); err != nil {
		t.Fatal(err)
	}
	rig.Eventually(t, 20*time.Second, "project.2's first alert delivered", func() bool {
		_, _, ok := rc.first("project.2")
		return ok
	})
	if _, at, _ := rc.first("project.2"); at.Sub(sent) > 5*time.Second {
		t.Errorf("project.2's first alert came %v after it was queued, behind the flood; want within 5 s", at.Sub(sent))
	}
	// Every failure of the flood is accounted for by the deliveries that carried it.
	rig.Eventually(t, 60*time.Second, "the flood's deliveries account for every failure", func() bool {
		total := 0
		for _, n := range rc.all() {
			if n.Topic == "project.1" {
				total += max(n.Coalesced, 1)
			}
		}
		return total == flood
	})
	var folded *workflow.Notification
	for _, n := range rc.all() {
		if n.Topic != "project.1" {
			continue
		}
		if !n.DataTruncated || len(n.Data) > 1024 || !strings.Contains(string(n.Data), `"title":"nightly"`) {
			t.Errorf("delivery of %s: data_truncated %v, %d bytes of data; want it cut to 1024 bytes, the title kept",
				n.Workflow, n.DataTruncated, len(n.Data))
		}
		if n.Coalesced > 1 && folded == nil {
			folded = &n
		}
	}
	if folded == nil {
		t.Fatalf("no delivery of the flood says it stands for more than one failure")
	}
	if len(folded.Workflows) < 2 || len(folded.Workflows) > 51 || !strings.HasPrefix(folded.Workflows[0], "wf-") {
		t.Errorf("folded delivery (coalesced %d) names workflows %v; want some of the flood's, at most 51",
			folded.Coalesced, folded.Workflows)
	}
	fams := rig.Gather(t, reg)
	deliveries := 0
	for _, n := range rc.all() {
		if n.Topic == "project.1" {
			deliveries++
		}
	}
	// A folded notification is counted when folded, though it may later be sent at the head of the next delivery.
	if v, _ := rig.MetricValue(fams, "hub_notify_coalesced_total"); v < float64(flood-deliveries) || v > flood-1 {
		t.Errorf("hub_notify_coalesced_total = %v, want from %d to %d (%d failures in %d deliveries)",
			v, flood-deliveries, flood-1, flood, deliveries)
	}
	if v, _ := rig.MetricValue(fams, "hub_notify_data_truncated_total"); v != flood {
		t.Errorf("hub_notify_data_truncated_total = %v, want %d", v, flood)
	}
}

// Failures on many topics, to a receiver that answers 500: the outbox and the retry set never hold more than
// max_pending deliveries; what is past it is dropped and counted.
func TestOutboxAndRetrySetStayUnderMaxPending(t *testing.T) {
	rc := &slowReceiver{delay: 10 * time.Millisecond, status: http.StatusInternalServerError}
	d, out, reg := floodFixture(t, rc, notify.Config{MaxPending: 20, BackoffMin: time.Minute})
	ctx := context.Background()
	for i := range 200 {
		if err := d.Notify(ctx, floodNote(fmt.Sprintf("project.%d", i), i, `{"status":"failed"}`)); err != nil {
			t.Fatal(err)
		}
		if n, _ := out.Pending(ctx); n > 20 {
			t.Fatalf("after %d failures on as many topics the outbox holds %d deliveries; want at most max_pending 20", i+1, n)
		}
	}
	rig.Eventually(t, 30*time.Second, "the 20 deliveries tried once and waiting for a retry", func() bool {
		n, _ := out.Pending(ctx)
		return len(rc.all()) >= 20 && n <= 20
	})
	fams := rig.Gather(t, reg)
	if v, _ := rig.MetricValue(fams, "hub_notify_dropped_total", "reason=outbox_full"); v != 180 {
		t.Errorf("hub_notify_dropped_total{reason=outbox_full} = %v, want 180", v)
	}
}
