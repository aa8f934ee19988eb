package chaos

import (
	"fmt"

	"github.com/syncverse/hub/hub"
)

// Tally is what a comparison of received events with the stream found.
type Tally struct {
	Expected   int // events the client should have received
	Delivered  int // events received (duplicates included)
	Lost       int // expected, never received, and not excused by a reset just before the gap
	Duplicated int // received more than once
	Reordered  int // received after a later event of the same topic
	Unknown    int // ids the stream never held
	Excused    int // skipped right after an event: reset and below its oldest, as the contract allows
	Resets     int
	Malformed  int // frames the clients could not read as the contract's (see ClientStats.Malformed)
}

// Add sums two tallies.
func (t Tally) Add(o Tally) Tally {
	return Tally{t.Expected + o.Expected, t.Delivered + o.Delivered, t.Lost + o.Lost, t.Duplicated + o.Duplicated,
		t.Reordered + o.Reordered, t.Unknown + o.Unknown, t.Excused + o.Excused, t.Resets + o.Resets, t.Malformed + o.Malformed}
}

// Clean reports whether nothing was lost, duplicated, reordered, invented or malformed.
func (t Tally) Clean() bool {
	return t.Lost == 0 && t.Duplicated == 0 && t.Reordered == 0 && t.Unknown == 0 && t.Malformed == 0
}

func (t Tally) String() string {
	return fmt.Sprintf("expected %d, delivered %d, lost %d, duplicated %d, reordered %d, unknown %d, excused by reset %d, resets %d, malformed frames %d",
		t.Expected, t.Delivered, t.Lost, t.Duplicated, t.Reordered, t.Unknown, t.Excused, t.Resets, t.Malformed)
}

// Check compares what a client received on one topic with truth, the topic's events in stream order (XRANGE, or
// the acknowledged ids when Redis lost some). Events at or before after are not expected. A gap is excused only when
// a reset arrived since the previous event, and only below the reset's oldest: that is the contract's "never a
// silent skip".
func Check(truth []hub.ID, after hub.ID, got []Got) Tally {
	pos := make(map[hub.ID]int, len(truth))
	for i, id := range truth {
		if after.Less(id) {
			pos[id] = i
		}
	}
	var t Tally
	t.Expected = len(pos)
	seen := make([]bool, len(truth))
	excused := make([]bool, len(truth))
	top := -1 // truth index of the latest event received
	for i, id := range truth {
		if !after.Less(id) {
			top = i // everything up to the start position counts as received already
		}
	}
	resetPending, resetOldest := false, hub.ID{}
	for _, g := range got {
		if g.Reset {
			t.Resets++
			resetPending, resetOldest = true, g.ID
			continue
		}
		j, ok := pos[g.ID]
		if !ok {
			t.Unknown++
			continue
		}
		t.Delivered++
		switch {
		case seen[j]:
			t.Duplicated++
		case j < top:
			t.Reordered++
		default:
			if resetPending {
				for k := top + 1; k < j; k++ {
					// A reset excuses only what it says is gone: ids below its oldest. One without an oldest
					// (replay limit, history lost) names no bound, so it excuses the skip up to this event.
					excused[k] = resetOldest.IsZero() || truth[k].Less(resetOldest)
				}
			}
			top = j
		}
		seen[j] = true
		resetPending = false
	}
	for i, id := range truth {
		if !after.Less(id) || seen[i] {
			continue
		}
		if excused[i] || resetPending && i > top && id.Less(resetOldest) { // a last reset excuses what it skips
			t.Excused++
		} else {
			t.Lost++
		}
	}
	return t
}

// Missing returns truth's ids after the start position that the client never received, for failure messages (at most n).
func Missing(truth []hub.ID, after hub.ID, got []Got, n int) []string {
	have := make(map[hub.ID]bool, len(got))
	for _, g := range got {
		if !g.Reset {
			have[g.ID] = true
		}
	}
	var out []string
	for _, id := range truth {
		if after.Less(id) && !have[id] && len(out) < n {
			out = append(out, id.String())
		}
	}
	return out
}
