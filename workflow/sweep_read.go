package workflow

import (
	"cmp"
	"context"
	"slices"
	"time"
)

// How a sweep reads: the cursors of the topics that may call for a verdict, then the states whose cursor moved, in
// batches, within the sweep's budget of fields.

// refresh reads the states that changed: every topic's at a rescan, otherwise those with workflows under way.
func (s *Sweeper) refresh(ctx context.Context, now time.Time) error {
	if now.Sub(s.lastScan) >= s.cfg.Rescan {
		seen := map[string]bool{}
		if err := s.src.Topics(ctx, func(t string) { seen[t] = true }); err != nil {
			return err
		}
		for t := range s.topics {
			if !seen[t] {
				delete(s.topics, t)
				delete(s.deferred, t)
			}
		}
		for t := range seen {
			if s.topics[t] == nil {
				s.topics[t] = &TopicState{Topic: t}
			}
		}
		s.lastScan = now
		return s.reread(ctx, keys(s.topics))
	}
	var busy []string
	for t, st := range s.topics {
		if st.swept && st.busy || !st.swept && st.underWay() {
			busy = append(busy, t)
		} else if _, late := s.deferred[t]; late {
			busy = append(busy, t)
		}
	}
	return s.reread(ctx, busy)
}

func keys(m map[string]*TopicState) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// reread reads again the states of topics whose cursor moved, those deferred by the last sweep first, until the
// sweep's budget of fields is spent; the rest are deferred to the next sweep.
func (s *Sweeper) reread(ctx context.Context, topics []string) error {
	if len(topics) == 0 {
		return nil
	}
	s.sweeps++
	if len(s.deferred) > 0 {
		s.deferFirst(topics)
	}
	cursors, err := s.src.Cursors(ctx, topics)
	if err != nil {
		return err
	}
	r := rereading{s: s}
	for i, t := range topics {
		old := s.topics[t]
		switch {
		case cursors[i] == "":
			delete(s.topics, t)
			delete(s.deferred, t)
		case old == nil || old.Cursor != cursors[i] || old.dirty():
			if err := r.add(ctx, t, old); err != nil {
				return err
			}
		}
	}
	return r.flush(ctx)
}

// deferFirst orders topics so that those an earlier sweep deferred come first, the longest deferred first.
func (s *Sweeper) deferFirst(topics []string) {
	slices.SortStableFunc(topics, func(a, b string) int {
		da, aok := s.deferred[a]
		db, bok := s.deferred[b]
		switch {
		case aok && bok:
			return cmp.Compare(da, db)
		case aok:
			return -1
		case bok:
			return 1
		}
		return 0
	})
}

// stateBatch is how many topics' states one States call reads together.
const stateBatch = 32

// rereading reads the changed states of a sweep in batches of topics read before (their size known from that read),
// alone for a topic never read, and defers what is past the sweep's budget of fields.
type rereading struct {
	s      *Sweeper
	spent  int // fields read
	topics []string
	prevs  []*TopicState
	guess  int // the batch's fields, as its last reads found them
}

func (r *rereading) add(ctx context.Context, t string, old *TopicState) error {
	s := r.s
	if r.spent+r.guess >= s.cfg.SweepFields {
		if err := r.flush(ctx); err != nil {
			return err
		}
	}
	if r.spent >= s.cfg.SweepFields {
		if _, ok := s.deferred[t]; !ok {
			s.cfg.Metrics.deferred.Inc()
			s.deferred[t] = s.sweeps
		}
		return nil
	}
	r.topics, r.prevs = append(r.topics, t), append(r.prevs, old)
	if old == nil || old.Workflows == nil {
		return r.flush(ctx) // never read (nil, or the placeholder of a rescan): its size is unknown, so read it now
	}
	if r.guess += max(old.Fields, 1); len(r.topics) == stateBatch {
		return r.flush(ctx)
	}
	return nil
}

func (r *rereading) flush(ctx context.Context) error {
	if len(r.topics) == 0 {
		return nil
	}
	sts, err := r.s.src.States(ctx, r.topics, r.prevs)
	if err != nil {
		return err
	}
	for i, st := range sts {
		r.spent += max(st.Fields, 1)
		delete(r.s.deferred, r.topics[i])
		r.s.topics[r.topics[i]] = st
	}
	r.topics, r.prevs, r.guess = r.topics[:0], r.prevs[:0], 0
	return nil
}

// underWay reports whether a topic has a workflow that may still call for a verdict without a new event.
func (st *TopicState) underWay() bool {
	if st.Workflows == nil || len(st.FenceLow) > 0 {
		return true
	}
	for _, w := range st.Workflows {
		if w.underWay() {
			return true
		}
	}
	return false
}

// underWay reports whether the workflow may still call for a verdict without a new event.
func (w *Workflow) underWay() bool {
	if w.Active() || w.stale {
		return true
	}
	for _, m := range w.Marks {
		if !m.Queued {
			return true
		}
	}
	return false
}

// dirty reports whether the state was changed by a commit of this sweeper since it was read.
func (st *TopicState) dirty() bool {
	if st.swept && !st.committed {
		return false // stale is set by commits alone
	}
	for _, w := range st.Workflows {
		if w.stale {
			return true
		}
	}
	return false
}
