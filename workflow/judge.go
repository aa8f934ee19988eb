package workflow

import (
	"time"
)

// A sweep judges a topic's state only when the judgement may have changed: when the state was read anew, when a
// commit or a trim of this sweeper touched it, or when the earliest stall it could come to is due. Between those, a
// topic of 10,000 quiet ones costs a sweep one look at a time. What a judgement leaves on the state for the sweeps
// after it:
type judgement struct {
	// until is when the judgement runs out: the earliest moment a workflow under way in it stalls; zero when the
	// state is to be judged at the next sweep (never judged, touched since, or its last judgement called for
	// verdicts, which may fail to commit and are then decided again).
	until time.Time
	// holders are the state's running workflows that hold a lock, for the duplicates across topics.
	holders []*Workflow
	// tally is hub_workflows's count of the state by status (gaugeStatuses' order), valid while tallied; label is
	// the topic label it is counted under ("" when workflows.metric_topics does not name the topic).
	tally   tally
	label   string
	tallied bool
}

// never is the until of a state in which nothing can stall.
var never = time.Unix(1<<62, 0)

// touched makes the state be judged and tallied again: a commit or a trim of this sweeper changed it in place.
func (st *TopicState) touched() {
	st.until, st.tallied = time.Time{}, false
}

// judge appends the verdicts st calls for at now to acts, and records what the sweeps after it may reuse.
func (s *Sweeper) judge(now time.Time, st *TopicState, acts []action) []action {
	after := s.stallAfter(st.Topic)
	n := len(acts)
	busy := st.Workflows == nil || len(st.FenceLow) > 0
	until := never
	var counts tally
	st.holders = st.holders[:0]
	for _, w := range st.Workflows {
		counts.add(gaugeStatus(now, w, after))
		acts = append(acts, decide(now, st.Topic, w, after)...)
		acts = append(acts, requeues(st.Topic, w)...)
		busy = busy || w.underWay()
		if at, ok := w.stallsAt(after); ok && at.Before(until) {
			until = at
		}
		if w.Status == StatusRunning && w.Lock.Held() {
			st.holders = append(st.holders, w)
		}
	}
	st.busy, st.swept = busy, true
	// A judgement with verdicts is made again next sweep, and its count after the commits (Metrics.count).
	st.until, st.tally, st.label, st.tallied = until, counts, s.cfg.Metrics.label(st.Topic), len(acts) == n
	if len(acts) > n {
		st.until = time.Time{}
	}
	return acts
}

// stallsAt reports when the workflow stalls without a new event, for one under way and not stalled on its latest
// event already.
func (w *Workflow) stallsAt(stallAfter time.Duration) (time.Time, bool) {
	if !w.Active() {
		return time.Time{}, false
	}
	if kind, _ := splitMark(w.Marks[MarkHealth].Value); kind == Stalled {
		return time.Time{}, false
	}
	return w.stallTime(stallAfter), true
}

// stallTime is when the workflow will have been silent for what it is allowed: stall_after or its eta, the longer.
func (w *Workflow) stallTime(stallAfter time.Duration) time.Time {
	return idTime(w.EventID).Add(max(stallAfter, w.ETA))
}

// gaugeStatus is the status hub_workflows counts the workflow under at now: stalled for one under way that is
// stalled on its latest event or silent past what is allowed.
func gaugeStatus(now time.Time, w *Workflow, stallAfter time.Duration) string {
	if !w.Active() {
		return w.Status
	}
	if kind, basis := splitMark(w.Marks[MarkHealth].Value); kind == Stalled && basis == w.EventID.String() {
		return Stalled
	}
	if !now.Before(w.stallTime(stallAfter)) {
		return Stalled
	}
	return w.Status
}
