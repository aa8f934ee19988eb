package hub

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// At debug level the hub says what it decided: the range it replayed, and whom it evicted.
func TestDebugLogShowsReplayRangeAndEviction(t *testing.T) {
	var buf bytes.Buffer
	st := newFakeStore()
	h := New(st, Config{ClientBuffer: 2, Logger: zerolog.New(&buf).Level(zerolog.DebugLevel)})
	stored := st.append("t", 3)
	s := mustSubscribe(t, h, "t")
	mustStart(t, s, []From{{After: stored[0].ID, Set: true}}, &recSink{})
	for _, ev := range st.append("t", 3) { // nobody reads s: the third overflows a buffer of 2
		h.Broadcast(ev)
	}
	lines := map[string]map[string]any{}
	for l := range strings.SplitSeq(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		lines[m["message"].(string)] = m
	}
	replay := lines["replay"]
	if replay == nil || replay["after"] != stored[0].IDText || replay["to"] != stored[2].IDText || replay["events"] != 2.0 {
		t.Errorf("debug replay line = %v, want after %s to %s, 2 events (all lines: %s)", replay, stored[0].IDText, stored[2].IDText, buf.String())
	}
	if ev := lines["subscription evicted: queue full"]; ev == nil || ev["buffer"] != 2.0 {
		t.Errorf("debug eviction line = %v, want one with buffer 2 (all lines: %s)", ev, buf.String())
	}
	buf.Reset()
	h2 := New(st, Config{Logger: zerolog.New(&buf).Level(zerolog.InfoLevel)})
	mustStart(t, mustSubscribe(t, h2, "t"), []From{{After: stored[0].ID, Set: true}}, &recSink{})
	if buf.Len() != 0 {
		t.Errorf("at info level the hub logged %q, want nothing", buf.String())
	}
}
