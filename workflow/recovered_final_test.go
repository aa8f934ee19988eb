package workflow_test

import (
	"testing"
	"time"

	"github.com/syncverse/hub/workflow"
)

// A stalled workflow that ends (succeeded, failed or cancelled) sent an event again: the stall is over, and the
// on-call who was told of it is told it cleared.
func TestStalledWorkflowThatEndsIsRecovered(t *testing.T) {
	for _, status := range []string{"succeeded", "failed", "cancelled"} {
		t.Run(status, func(t *testing.T) {
			r := newRig(t)
			s := r.sweeper(nil, workflow.Config{StallAfter: 10 * time.Second})
			r.publish("deploy.5", "progress", `{"workflow":"wf-5","status":"running"}`)
			r.advance(11 * time.Second)
			r.sweep(s)
			if got := verdicts(r.health("deploy.5")); !equal(got, []string{"stalled:wf-5"}) {
				t.Fatalf("health after 11 s of silence = %v, want stalled", got)
			}
			r.publish("deploy.5", "progress", `{"workflow":"wf-5","status":"`+status+`"}`)
			r.sync()
			r.sweep(s)
			r.sweep(s)
			if got := verdicts(r.health("deploy.5")); !equal(got, []string{"stalled:wf-5", "recovered:wf-5"}) {
				t.Fatalf("health after a %s event = %v, want stalled then recovered", status, got)
			}
			want := []string{"stalled:wf-5", "recovered:wf-5"}
			if status == "failed" {
				want = append(want, "failed:wf-5")
			}
			if got := r.kinds(); !equal(got, want) {
				t.Errorf("notifications = %v, want %v", got, want)
			}
		})
	}
}
