package workflow_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/workflow"
)

// Sweeps that pass over a quiet topic still bring each stall at its moment, not a sweep later, and hub_workflows
// follows: two workflows of one topic, allowed 10 s and 30 s of silence, swept a millisecond before and at each
// moment.
func TestQuietTopicStallsEachWorkflowOnTime(t *testing.T) {
	r := newRig(t)
	reg := prometheus.NewRegistry()
	s := r.sweeper(reg, workflow.Config{StallAfter: 10 * time.Second})
	id, _ := hub.ParseID(r.publish("quiet.1", "progress", `{"workflow":"short","status":"running"}`))
	r.publish("quiet.1", "progress", `{"workflow":"long","status":"running","eta_s":30}`)
	sent := time.UnixMilli(int64(id.Ms))
	stalled := func() float64 {
		v, _ := rig.MetricValue(rig.Gather(t, reg), "hub_workflows", "status=stalled")
		return v
	}
	for _, step := range []struct {
		at      time.Duration // after short's event
		want    []string
		stalled float64
	}{
		{0, nil, 0},
		{5 * time.Second, nil, 0},
		{10*time.Second - time.Millisecond, nil, 0},
		{10 * time.Second, []string{"stalled:short"}, 1},
		{20 * time.Second, []string{"stalled:short"}, 1},
		// long's event came up to a few ms after short's: its 30 s end later by as much.
		{30*time.Second - time.Millisecond, []string{"stalled:short"}, 1},
		{31 * time.Second, []string{"stalled:short", "stalled:long"}, 2},
	} {
		r.mu.Lock()
		r.now = sent.Add(step.at)
		r.mu.Unlock()
		r.sweep(s)
		if got := verdicts(r.health("quiet.1")); !equal(got, step.want) {
			t.Fatalf("verdicts at %v = %v, want %v", step.at, got, step.want)
		}
		if got := stalled(); got != step.stalled {
			t.Errorf("hub_workflows{status=stalled} at %v = %v, want %v", step.at, got, step.stalled)
		}
	}
}
