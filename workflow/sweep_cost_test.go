package workflow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/workflow"
)

// countingSource is an in-memory Source of one topic that counts what a sweep asks of the store. It records marks as
// the verdict script does: a commit whose mark holds its value already, or whose expected event is no longer the
// latest, records nothing.
type countingSource struct {
	mu      sync.Mutex
	topic   string
	cursor  int
	wf      workflow.Workflow // the one workflow's latest event
	marks   map[string]workflow.Mark
	commits int
	states  int
	asked   int // cursors asked for
}

func (s *countingSource) Topics(_ context.Context, fn func(string)) error {
	fn(s.topic)
	return nil
}

func (s *countingSource) Cursors(_ context.Context, topics []string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(topics))
	for i := range topics {
		out[i] = fmt.Sprint(s.cursor)
	}
	s.asked += len(topics)
	return out, nil
}

func (s *countingSource) States(_ context.Context, topics []string, _ []*workflow.TopicState) ([]*workflow.TopicState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*workflow.TopicState, len(topics))
	for i, topic := range topics {
		s.states++
		w := s.wf
		w.Marks = maps.Clone(s.marks)
		out[i] = &workflow.TopicState{Topic: topic, Cursor: fmt.Sprint(s.cursor),
			Workflows: map[string]*workflow.Workflow{w.ID: &w}}
	}
	return out, nil
}

func (s *countingSource) Data(context.Context, string, string) (json.RawMessage, error) {
	return json.RawMessage(`{"workflow":"wf-3","status":"running"}`), nil
}

func (s *countingSource) Trim(context.Context, string, []*workflow.Workflow) (int, error) {
	return 0, nil
}

func (s *countingSource) Commit(_ context.Context, c workflow.Commit) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commits++
	if s.marks[c.Mark].Value == c.Value || (!c.Expect.IsZero() && c.Expect != s.wf.EventID) {
		return false, nil
	}
	s.marks[c.Mark] = workflow.Mark{Value: c.Value}
	if c.Event != nil {
		s.cursor++ // the health event moves the topic's cursor
	}
	return true, nil
}

func (s *countingSource) MarkQueued(_ context.Context, _, _, mark, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.marks[mark].Value == value {
		s.marks[mark] = workflow.Mark{Value: value, Queued: true}
	}
	return nil
}

func (s *countingSource) counts() (commits, states int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commits, s.states
}

// A stall is decided once: the sweeps after it neither try to commit it again nor read the topic's state again,
// though the store would refuse the repeat. A sweep costs the store nothing per stalled workflow that did not move.
func TestStalledWorkflowCostsNoCommitOnLaterSweeps(t *testing.T) {
	last := time.Now().Add(-time.Minute)
	src := &countingSource{topic: "deploy.3", cursor: 1, marks: map[string]workflow.Mark{}, wf: workflow.Workflow{
		ID: "wf-3", EventID: hub.ID{Ms: uint64(last.UnixMilli())}, Status: workflow.StatusRunning}}
	told := &sweepRig{t: t}
	now := time.Now()
	s := workflow.New(src, told, workflow.Config{StallAfter: 10 * time.Second, Now: func() time.Time { return now }})
	sweep := func() {
		t.Helper()
		if err := s.Sweep(context.Background()); err != nil {
			t.Fatalf("Sweep = %v", err)
		}
	}
	sweep()
	if commits, _ := src.counts(); commits != 1 || src.marks[workflow.MarkHealth].Value == "" {
		t.Fatalf("first sweep over a workflow silent for a minute: %d commits, health mark %q; want the stall committed",
			commits, src.marks[workflow.MarkHealth].Value)
	}
	sweep() // reads back the state its commit changed
	if commits, _ := src.counts(); commits != 1 {
		t.Fatalf("second sweep over the stalled workflow: %d commits in all, want still 1", commits)
	}
	_, before := src.counts()
	for range 3 {
		sweep()
	}
	if commits, states := src.counts(); commits != 1 || states != before {
		t.Errorf("three more sweeps over the stalled workflow: %d commits in all (want 1), %d state reads (want none)",
			commits, states-before)
	}
	if got := told.kinds(); !equal(got, []string{"stalled:wf-3"}) {
		t.Errorf("notifications = %v, want one stalled", got)
	}
}

func (s *countingSource) cursorsAsked() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asked
}

// A topic whose workflows all ended, and whose ends are recorded, costs a sweep nothing until the next rescan, not
// even its cursor; a topic with a running workflow has its cursor asked every sweep (a new event is judged within a
// sweep). The sweeper remembers which is which from its last sweep instead of walking every workflow again.
func TestEndedTopicIsLeftAloneUntilTheRescan(t *testing.T) {
	src := &countingSource{topic: "deploy.4", cursor: 1, marks: map[string]workflow.Mark{}, wf: workflow.Workflow{
		ID: "wf-4", EventID: hub.ID{Ms: uint64(time.Now().UnixMilli())}, Status: workflow.StatusSucceeded}}
	now := time.Now()
	s := workflow.New(src, &sweepRig{t: t}, workflow.Config{StallAfter: time.Minute, Rescan: 10 * time.Second,
		Now: func() time.Time { return now }})
	sweep := func() {
		t.Helper()
		if err := s.Sweep(context.Background()); err != nil {
			t.Fatalf("Sweep = %v", err)
		}
	}
	sweep() // the rescan reads it and records its end
	sweep() // reads back what that commit changed
	asked := src.cursorsAsked()
	for range 3 {
		sweep()
	}
	if n := src.cursorsAsked() - asked; n != 0 {
		t.Fatalf("three sweeps over a topic whose workflow ended asked its cursor %d times; want none until the rescan", n)
	}
	src.mu.Lock()
	src.cursor++
	src.wf.Status, src.wf.EventID = workflow.StatusRunning, hub.ID{Ms: uint64(now.UnixMilli()) + 1}
	src.mu.Unlock()
	now = now.Add(10 * time.Second) // the rescan finds it running again
	sweep()
	asked = src.cursorsAsked()
	for range 3 {
		sweep()
	}
	if n := src.cursorsAsked() - asked; n != 3 {
		t.Errorf("three sweeps over a topic with a running workflow asked its cursor %d times; want every sweep", n)
	}
}
