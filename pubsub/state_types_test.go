package pubsub

import (
	"context"
	"encoding/json"
	"testing"
)

// A workflow's place in the state (and so in the snapshot the console paints first, and in what the hub judges) is
// its latest progress event: an event of another type that names the workflow, a log line, neither replaces it
// nor creates one.
func TestStateKeepsProgressEventsPerWorkflow(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		pub := b.publisher(PublisherConfig{})
		progress, err := pub.Publish(ctx, "t", "progress", []byte(`{"workflow":"wf-1","status":"running"}`))
		if err != nil {
			t.Fatal(err)
		}
		for _, data := range []string{`{"workflow":"wf-1","status":"failed"}`, `{"workflow":"via-log","status":"failed"}`} {
			if _, err := pub.Publish(ctx, "t", "log", []byte(data)); err != nil {
				t.Fatal(err)
			}
		}
		snap, err := b.store().Snapshot(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		var env struct{ ID, Type string }
		_ = json.Unmarshal(snap.Workflows["wf-1"], &env)
		if len(snap.Workflows) != 1 || env.ID != progress || env.Type != "progress" {
			t.Errorf("snapshot workflows = %s, want wf-1 alone, as its progress event %s", snap.Workflows, progress)
		}
		for _, f := range []string{"wf:via-log", "wfstart:via-log"} {
			if ok, _ := b.rdb.HExists(ctx, b.keys.State("t"), f).Result(); ok {
				t.Errorf("state field %s exists for a workflow only a log event named", f)
			}
		}
	})
}
