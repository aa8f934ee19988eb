package workflow

import (
	"testing"
	"time"

	"github.com/syncverse/hub/hub"
)

// A judgement without verdicts lasts until the first workflow under way would stall, whatever else the state holds;
// one with verdicts, and one touched since, is made again at the next sweep.
func TestJudgementLastsUntilTheFirstStall(t *testing.T) {
	t0 := time.UnixMilli(1_700_000_000_000)
	at := func(d time.Duration) hub.ID { return hub.ID{Ms: uint64(t0.Add(d).UnixMilli())} }
	lock := &Lock{Key: "k", Holder: "h", Fence: 1, State: "acquired"}
	st := &TopicState{Topic: "t", Workflows: map[string]*Workflow{
		"run":    {ID: "run", EventID: at(0), Status: StatusRunning, Lock: lock, Marks: map[string]Mark{}},
		"eta":    {ID: "eta", EventID: at(-5 * time.Second), Status: StatusQueued, ETA: time.Minute, Marks: map[string]Mark{}},
		"ended":  {ID: "ended", EventID: at(-time.Hour), Status: StatusSucceeded, Marks: map[string]Mark{MarkFinal: {Value: StatusSucceeded + " " + at(-time.Hour).String(), Queued: true}}},
		"stuck":  {ID: "stuck", EventID: at(-time.Hour), Status: StatusRunning, Marks: map[string]Mark{MarkHealth: {Value: Stalled + " " + at(-time.Hour).String(), Queued: true}}},
		"silent": {ID: "silent", EventID: at(-2 * time.Second), Status: StatusRunning, Marks: map[string]Mark{MarkHealth: {Value: Recovered + " " + at(-2*time.Second).String(), Queued: true}}},
	}}
	s := New(nil, nil, Config{StallAfter: 10 * time.Second})

	if acts := s.judge(t0.Add(time.Second), st, nil); len(acts) != 0 {
		t.Fatalf("judge at 1 s = %d actions (%+v), want none", len(acts), acts)
	}
	// "silent" stalls first: its last event is 2 s older than "run"'s; "eta" has a minute, "stuck" is stalled on its
	// latest event already and "ended" has ended.
	if want := t0.Add(8 * time.Second); !st.until.Equal(want) {
		t.Errorf("until = %v, want %v (the first stall)", st.until, want)
	}
	if len(st.holders) != 1 || st.holders[0].ID != "run" {
		t.Errorf("holders = %v, want the running workflow that holds k", st.holders)
	}

	acts := s.judge(t0.Add(8*time.Second), st, nil)
	if len(acts) != 1 || acts[0].verdict != Stalled || acts[0].commit.Workflow != "silent" {
		t.Fatalf("judge at 8 s = %+v, want silent's stall", acts)
	}
	if !st.until.IsZero() {
		t.Errorf("until after a judgement with a verdict = %v, want zero (judged again next sweep)", st.until)
	}

	st.Workflows["silent"].Marks[MarkHealth] = Mark{Value: Stalled + " " + at(-2*time.Second).String(), Queued: true}
	s.judge(t0.Add(8*time.Second), st, nil)
	if want := t0.Add(10 * time.Second); !st.until.Equal(want) {
		t.Errorf("until once silent's stall is recorded = %v, want %v (run's stall)", st.until, want)
	}
	st.touched()
	if !st.until.IsZero() || st.tallied {
		t.Errorf("after touched: until %v, tallied %v; want zero and false", st.until, st.tallied)
	}
}

// A state in which nothing can stall is never judged again by time: only a new read or a touch brings it back.
func TestJudgementOfEndedWorkflowsLastsForever(t *testing.T) {
	st := &TopicState{Topic: "t", Workflows: map[string]*Workflow{
		"ended": {ID: "ended", EventID: hub.ID{Ms: 1}, Status: StatusFailed,
			Marks: map[string]Mark{MarkFinal: {Value: StatusFailed + " 1-0", Queued: true}}},
	}}
	s := New(nil, nil, Config{})
	if acts := s.judge(time.Now(), st, nil); len(acts) != 0 {
		t.Fatalf("judge = %+v, want no action for a failed workflow told already", acts)
	}
	if !st.until.Equal(never) {
		t.Errorf("until = %v, want never", st.until)
	}
}
