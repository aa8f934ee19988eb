package notify_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/notify"
	"github.com/syncverse/hub/workflow"
)

// The Slack message reads the workflow's data as the console does: field names with their exact case, so a "Step"
// or "MESSAGE" beside the real fields says nothing.
func TestSlackTextReadsFieldsWithExactCase(t *testing.T) {
	f := newFixture(t)
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	d := f.run(t, notify.Config{Webhooks: []notify.Webhook{{URL: srv.URL, Format: notify.FormatSlack}}})
	n := note(workflow.Failed)
	n.Data = json.RawMessage(`{"workflow":"wf-1","step":"migrate","Step":"elsewhere","Title":"not the title",` +
		`"progress":0.5,"PROGRESS":0.9,"message":"disk full","MESSAGE":"all good"}`)
	if err := d.Notify(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	rig.Eventually(t, 5*time.Second, "one slack message", func() bool { return len(rc.requests()) == 1 })
	var msg struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(rc.requests()[0].body, &msg); err != nil {
		t.Fatal(err)
	}
	want := ":x: *failed*: workflow `wf-1` on topic `deploy.7`, step migrate, 50%: disk full"
	if msg.Text != want {
		t.Errorf("slack text = %q, want %q", msg.Text, want)
	}
}
