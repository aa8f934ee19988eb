package workflow

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/syncverse/hub/hub"
)

// Commit is one verdict to record atomically beside a workflow's state.
type Commit struct {
	Topic    string
	Workflow string
	Mark     string // MarkHealth, MarkDup or MarkFinal
	Value    string // the mark's new value, "<kind> <basis>"
	// Expect, when not zero, is the workflow's latest event id as the verdict saw it: the commit does nothing when
	// a newer event came since, so a stall is never declared over an event it did not see.
	Expect hub.ID
	// Event is the data of the health event published in the same step; nil publishes nothing.
	Event []byte
}

// action is one decision of a sweep: a commit to make and, when it is made, what to tell.
type action struct {
	commit  Commit
	verdict string // stalled, recovered or duplicate; "" for a workflow's end
	notify  string // the notification kind; "" when the on-call is not told
	about   hub.ID // the event the verdict is about
	wf      *Workflow
	requeue bool // the mark is committed already; only its notification is to be queued
}

// decide returns the verdicts one workflow calls for at now.
func decide(now time.Time, topic string, w *Workflow, stallAfter time.Duration) []action {
	var out []action
	kind, basis := splitMark(w.Marks[MarkHealth].Value)
	var cur string // the latest event's id, written out only where a mark is compared or made (a sweep judges every workflow)
	if kind == Stalled || w.Final() {
		cur = w.EventID.String()
	}
	switch {
	case kind == Stalled && basis != cur:
		out = append(out, action{verdict: Recovered, notify: Recovered, about: w.EventID, wf: w, commit: Commit{
			Topic: topic, Workflow: w.ID, Mark: MarkHealth, Value: Recovered + " " + cur,
			Event: healthData(w.ID, Recovered, idTime(w.EventID), "", "an event came after the stall"),
		}})
	case w.Active() && kind != Stalled: // a stall on the latest event is recorded already
		if !now.Before(w.stallTime(stallAfter)) {
			allowed, silent := max(stallAfter, w.ETA), now.Sub(idTime(w.EventID))
			cur = w.EventID.String()
			detail := fmt.Sprintf("no event for %s (allowed %s)", silent.Round(time.Second), allowed)
			out = append(out, action{verdict: Stalled, notify: Stalled, about: w.EventID, wf: w, commit: Commit{
				Topic: topic, Workflow: w.ID, Mark: MarkHealth, Value: Stalled + " " + cur, Expect: w.EventID,
				Event: healthData(w.ID, Stalled, idTime(w.EventID), "", detail),
			}})
		}
	}
	if w.Final() && w.Marks[MarkFinal].Value != w.Status+" "+cur {
		a := action{about: w.EventID, wf: w, commit: Commit{
			Topic: topic, Workflow: w.ID, Mark: MarkFinal, Value: w.Status + " " + cur, Expect: w.EventID,
		}}
		if w.Status == StatusFailed {
			a.notify = Failed
		}
		out = append(out, a)
	}
	return out
}

// requeues returns the notifications of committed marks that were never queued: the replica that committed them
// stopped between the two steps.
func requeues(topic string, w *Workflow) []action {
	var out []action
	for _, name := range []string{MarkHealth, MarkDup, MarkFinal} {
		m, ok := w.Marks[name]
		if !ok || m.Queued {
			continue
		}
		kind, basis := splitMark(m.Value)
		if name == MarkFinal && kind != StatusFailed {
			continue
		}
		if name == MarkFinal {
			kind = Failed
		}
		about, _ := hub.ParseID(lastField(basis))
		out = append(out, action{notify: kind, about: about, wf: w, requeue: true,
			commit: Commit{Topic: topic, Workflow: w.ID, Mark: name, Value: m.Value}})
	}
	return out
}

// holder is one running workflow that holds a lock key.
type holder struct {
	topic string
	wf    *Workflow
}

// duplicates returns one verdict per key that two running workflows hold at once, given to the holder with the
// higher fence (the later acquisition), and
// one per lock event whose fence went backwards.
func duplicates(states []*TopicState) []action {
	byKey := map[string][]holder{}
	var out []action
	for _, st := range states {
		for _, w := range st.holders {
			byKey[w.Lock.Key] = append(byKey[w.Lock.Key], holder{st.Topic, w})
		}
		for key, l := range st.FenceLow {
			wf := cmp.Or(l.Workflow, l.Holder)
			w := st.Workflows[wf]
			if w == nil {
				w = &Workflow{ID: wf}
			}
			// One occurrence is one holder going on with one stale fence, however many renewals it sends.
			value := fmt.Sprintf("%s fence:%s@%s#%d", Duplicate, key, l.Holder, l.Fence)
			if w.Marks[MarkDup].Value == value {
				continue
			}
			detail := fmt.Sprintf("lock %s came with fence %d, lower than one already seen", key, l.Fence)
			out = append(out, action{verdict: Duplicate, notify: Duplicate, about: l.EventID, wf: w, commit: Commit{
				Topic: st.Topic, Workflow: wf, Mark: MarkDup, Value: value,
				Event: healthData(wf, Duplicate, idTime(l.EventID), key, detail),
			}})
		}
	}
	for key, hs := range byKey {
		if len(hs) < 2 {
			continue
		}
		// The newer acquisition is the one with the higher fence; renewals do not change who came second.
		slices.SortFunc(hs, func(a, b holder) int {
			return cmp.Or(cmp.Compare(a.wf.Lock.Fence, b.wf.Lock.Fence), a.wf.Lock.EventID.Compare(b.wf.Lock.EventID))
		})
		newest := hs[len(hs)-1]
		value := fmt.Sprintf("%s %s@%d", Duplicate, key, newest.wf.Lock.Fence)
		if newest.wf.Marks[MarkDup].Value == value {
			continue
		}
		others := make([]string, 0, len(hs)-1)
		for _, h := range hs[:len(hs)-1] {
			others = append(others, fmt.Sprintf("%s (topic %s, fence %d)", h.wf.ID, h.topic, h.wf.Lock.Fence))
		}
		detail := fmt.Sprintf("lock %s held with fence %d while also held by %s", key, newest.wf.Lock.Fence,
			strings.Join(others, ", "))
		out = append(out, action{verdict: Duplicate, notify: Duplicate, about: newest.wf.Lock.EventID, wf: newest.wf,
			commit: Commit{
				Topic: newest.topic, Workflow: newest.wf.ID, Mark: MarkDup, Value: value,
				Event: healthData(newest.wf.ID, Duplicate, idTime(newest.wf.Lock.EventID), key, detail),
			}})
	}
	return out
}

func healthData(wf, verdict string, since time.Time, key, detail string) []byte {
	b, _ := json.Marshal(Health{Workflow: wf, Verdict: verdict, Since: since.UTC(), Key: key, Detail: detail})
	return b
}

// notificationID names one occurrence the same way on every replica and every retry.
func notificationID(topic, wf, mark, value string) string {
	sum := sha256.Sum256([]byte(topic + "\x00" + wf + "\x00" + mark + "\x00" + value))
	return hex.EncodeToString(sum[:12])
}

// splitMark splits "<kind> <basis>".
func splitMark(v string) (kind, basis string) {
	kind, basis, _ = strings.Cut(v, " ")
	return kind, basis
}

func lastField(s string) string {
	if i := strings.LastIndexAny(s, " @"); i >= 0 {
		return s[i+1:]
	}
	return s
}
