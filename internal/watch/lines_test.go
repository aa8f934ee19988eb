package watch

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestLinesOnePerEvent(t *testing.T) {
	var out, notes bytes.Buffer
	l := &Lines{W: &out, Notes: &notes}
	e := ev("proj", 1, "progress", `{"workflow":"wf-1","step":"compile","progress":0.4,"status":"failed"}`)
	e.Time = time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.Local)
	l.Event(e)
	l.Control(Event{Topic: "proj", Type: "reset", Data: []byte(`{"reason":"history-truncated","oldest":"9-0"}`), Time: e.Time})
	l.State("reconnecting", "EOF; retrying in 1s")
	l.State("live", "")
	want := "03:04:05.006 proj progress wf-1 compile · 40% · failed\n" +
		"03:04:05.006 proj reset history-truncated (oldest stored 9-0): the history no longer reaches the position; snapshot reloaded\n"
	if out.String() != want {
		t.Errorf("Lines wrote\n%q\nwant\n%q", out.String(), want)
	}
	if notes.String() != "hub watch: EOF; retrying in 1s\nhub watch: live again\n" {
		t.Errorf("notes = %q", notes.String())
	}
	out.Reset()
	(&Lines{W: &out, Color: true}).Event(e)
	if !strings.HasPrefix(out.String(), sgrRed) {
		t.Errorf("a failed event's line with colour = %q, want it red", out.String())
	}
}

func TestJSONPassesEventsThrough(t *testing.T) {
	var out bytes.Buffer
	j := &JSON{W: &out, Notes: &bytes.Buffer{}}
	j.Event(ev("proj", 1, "progress", "{\"workflow\":\n \"wf-1\"}"))
	j.Control(Event{Topic: "proj", Type: "reset", Data: []byte(`{"reason":"x"}`), Time: t0})
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("JSON wrote %d lines, want 2: %q", len(lines), out.String())
	}
	var got struct {
		Topic, ID, Type string
		Data            map[string]any
	}
	if err := json.Unmarshal([]byte(lines[0]), &got); err != nil || got.Topic != "proj" || got.ID != "1-0" ||
		got.Type != "progress" || got.Data["workflow"] != "wf-1" {
		t.Errorf("first line %s = %+v, %v", lines[0], got, err)
	}
	if strings.Contains(lines[1], `"id"`) || !strings.Contains(lines[1], `"type":"reset"`) {
		t.Errorf("reset line %s, want no id and type reset", lines[1])
	}
}

// An event that carries its publisher's trace id shows it: trace=<id> at the end of its line, "trace" in its JSON
// line; a trace: field that is not a trace id is not shown.
func TestTraceIDShown(t *testing.T) {
	const tid = "4bf92f3577b34da6a3ce929d0e0e4736"
	e := ev("proj", 1, "log", `{"message":"hi"}`)
	e.Time = time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.Local)
	e.Trace = traceID(tid)
	var out bytes.Buffer
	(&Lines{W: &out}).Event(e)
	if !strings.HasSuffix(out.String(), " trace="+tid+"\n") {
		t.Errorf("Lines wrote %q, want it to end with trace=%s", out.String(), tid)
	}
	out.Reset()
	(&JSON{W: &out}).Event(e)
	if !strings.Contains(out.String(), `"trace":"`+tid+`"`) {
		t.Errorf("JSON wrote %q, want its trace", out.String())
	}
	for _, bad := range []string{"", "x", strings.ToUpper(tid), "00000000000000000000000000000000", tid + "0", "\x1b[2J" + tid[4:]} {
		if got := traceID(bad); got != "" {
			t.Errorf("traceID(%q) = %q, want none", bad, got)
		}
	}
}
