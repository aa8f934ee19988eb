package workflow

import (
	"cmp"
	"context"
	"slices"
)

// Reasons a workflow is deleted from the state, the label values of hub_workflow_state_trimmed_total.
const (
	TrimTopicWorkflows = "topic_workflows" // its topic held more than max_topic_workflows
	TrimTopicBytes     = "topic_bytes"     // its topic's state was larger than max_topic_state_bytes
	TrimWorkflows      = "workflows"       // the topics held more than max_workflows in all
)

// TrimReasons lists the reasons, each a label value created at zero.
var TrimReasons = []string{TrimTopicWorkflows, TrimTopicBytes, TrimWorkflows}

// enforce holds the state under its ceilings: a topic past max_topic_workflows or max_topic_state_bytes loses its
// oldest workflows; past max_workflows in all, the largest topics lose theirs until the total is back under it.
// The first to go are those that ended and whose end was recorded (and notified), oldest first; then the oldest.
func (s *Sweeper) enforce(ctx context.Context) error {
	total := 0
	for topic, st := range s.topics {
		n, size := len(st.Workflows), st.Bytes
		if n <= s.cfg.MaxTopicWorkflows && size <= s.cfg.MaxTopicStateBytes {
			total += n
			continue // under both: nothing to order or trim
		}
		var byCount, byBytes []*Workflow
		for _, w := range trimOrder(st) {
			switch {
			case n > s.cfg.MaxTopicWorkflows:
				byCount = append(byCount, w)
			case size > s.cfg.MaxTopicStateBytes:
				byBytes = append(byBytes, w)
			default:
				continue
			}
			n--
			size -= w.Size
		}
		if err := s.trim(ctx, topic, byCount, TrimTopicWorkflows); err != nil {
			return err
		}
		if err := s.trim(ctx, topic, byBytes, TrimTopicBytes); err != nil {
			return err
		}
		total += len(st.Workflows)
	}
	if excess := total - s.cfg.MaxWorkflows; excess > 0 {
		level := trimLevel(s.topics, excess)
		for topic, st := range s.topics {
			if over := len(st.Workflows) - level; over > 0 {
				if err := s.trim(ctx, topic, trimOrder(st)[:over], TrimWorkflows); err != nil {
					return err
				}
			}
		}
	}
	var bytes int64
	for _, st := range s.topics {
		bytes += st.Bytes
	}
	s.cfg.Metrics.stateBytes.Set(float64(bytes))
	return nil
}

// trimLevel is the largest number of workflows per topic that, with every topic cut down to it, removes at least
// excess workflows.
func trimLevel(topics map[string]*TopicState, excess int) int {
	removed := func(level int) int {
		n := 0
		for _, st := range topics {
			n += max(len(st.Workflows)-level, 0)
		}
		return n
	}
	lo, hi := 0, 0
	for _, st := range topics {
		hi = max(hi, len(st.Workflows))
	}
	for lo < hi { // removed(lo) >= excess holds throughout
		mid := (lo + hi + 1) / 2
		if removed(mid) >= excess {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// trimOrder lists a topic's workflows in the order they are trimmed: those whose end was recorded and queued first,
// then by their latest event, oldest first.
func trimOrder(st *TopicState) []*Workflow {
	out := make([]*Workflow, 0, len(st.Workflows))
	for _, w := range st.Workflows {
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b *Workflow) int {
		if da, db := a.done(), b.done(); da != db {
			if da {
				return -1
			}
			return 1
		}
		return cmp.Or(a.EventID.Compare(b.EventID), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// done reports whether the workflow ended and its end is recorded, with its notification queued.
func (w *Workflow) done() bool {
	m := w.Marks[MarkFinal]
	return w.Final() && m.Queued && m.Value == w.Status+" "+w.EventID.String()
}

// trim deletes wfs from the topic's state and from what the sweeper holds.
func (s *Sweeper) trim(ctx context.Context, topic string, wfs []*Workflow, reason string) error {
	if len(wfs) == 0 {
		return nil
	}
	n, err := s.src.Trim(ctx, topic, wfs)
	s.cfg.Metrics.trimmed.WithLabelValues(reason).Add(float64(n))
	if err != nil {
		return err
	}
	if n > 0 {
		s.cfg.Log.Warn().Str("topic", topic).Str("reason", reason).Int("workflows", n).
			Msg("workflow state past its ceiling; oldest workflows deleted")
	}
	st := s.topics[topic]
	st.touched()
	for _, w := range wfs {
		if st.Workflows[w.ID] == w {
			delete(st.Workflows, w.ID)
			st.Bytes -= w.Size
		}
	}
	return nil
}
