package workflow_test

import (
	"testing"
	"time"

	"github.com/syncverse/hub/workflow"
)

// Workflows are judged from progress events (and lock events for the keys they hold), never from another type that
// happens to carry a workflow and a status: a log line saying "failed" is not a failure.
func TestOnlyProgressEventsAreJudged(t *testing.T) {
	r := newRig(t)
	s := r.sweeper(nil, workflow.Config{StallAfter: 10 * time.Second})
	r.publish("ci.4", "log", `{"workflow":"via-log","status":"failed"}`)
	r.publish("ci.4", "progress", `{"workflow":"busy","status":"running"}`)
	r.publish("ci.4", "log", `{"workflow":"busy","status":"failed","line":"retrying a flaky test"}`)
	r.sweep(s)
	r.sweep(s)
	r.wantKinds("after log events saying failed")
	r.advance(11 * time.Second)
	r.sweep(s)
	r.wantKinds("11 s after busy's progress event (its status is its progress event's)", "stalled:busy")
	r.publish("ci.4", "log", `{"workflow":"busy","status":"running","line":"still here"}`)
	r.sync()
	r.sweep(s)
	r.wantKinds("after a log line naming the stalled workflow (no recovery)", "stalled:busy")
}

// Field names are matched with their exact case, as the console and the publish script read them: a "Status" beside
// "status" is another field, not the status.
func TestFieldNamesAreReadWithExactCase(t *testing.T) {
	r := newRig(t)
	s := r.sweeper(nil, workflow.Config{StallAfter: 10 * time.Second})
	r.publish("ci.5", "progress", `{"workflow":"mixed","status":"succeeded","Status":"failed"}`)
	r.publish("ci.5", "progress", `{"workflow":"upper","STATUS":"failed"}`)
	r.publish("ci.5", "progress", `{"workflow":"eta","status":"running","ETA_S":3600}`)
	r.sweep(s)
	r.wantKinds("for succeeded and status-less workflows")
	r.advance(11 * time.Second)
	r.sweep(s)
	r.wantKinds("after 11 s (ETA_S is not eta_s)", "stalled:eta")
}

// A lock event's fields are read with their exact case too: the key the publish script filed it under is the key
// the verdict is about.
func TestLockFieldsAreReadWithExactCase(t *testing.T) {
	r := newRig(t)
	s := r.sweeper(nil, workflow.Config{})
	r.publish("saga.5", "progress", `{"workflow":"A","status":"running"}`)
	r.publish("saga.5", "lock", `{"key":"k","holder":"a","fence":1,"state":"acquired","workflow":"A"}`)
	r.publish("saga.5", "progress", `{"workflow":"B","status":"running"}`)
	r.publish("saga.5", "lock", `{"key":"k","Key":"elsewhere","holder":"b","fence":2,"state":"acquired","workflow":"B"}`)
	r.sweep(s)
	got := r.health("saga.5")
	if !equal(verdicts(got), []string{"duplicate:B"}) || got[0].Key != "k" {
		t.Fatalf("health = %+v, want one duplicate on B for k", got)
	}
}
