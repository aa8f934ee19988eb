package watch

import (
	"strings"
	"testing"
	"time"
)

// sampleModel has a failed, a stalled, a running (with a wide-character title and an ETA) and a queued workflow.
func sampleModel() *Model {
	m := NewModel()
	m.Apply(ev("proj.1", 1, "progress", `{"workflow":"wf-ok","title":"Reindex 検索","step":"shard 3","progress":0.5,"status":"running","eta_s":125}`), false)
	m.Apply(ev("proj.1", 2, "progress", `{"workflow":"wf-bad","step":"tests","progress":0.8,"status":"failed","message":"3 failed"}`), false)
	m.Apply(ev("proj.2", 3, "progress", `{"workflow":"wf-slow","step":"upload","progress":0.25,"status":"running"}`), false)
	m.Apply(ev("proj.2", 4, "health", `{"workflow":"wf-slow","verdict":"stalled"}`), false)
	m.Apply(ev("proj.2", 5, "progress", `{"workflow":"wf-q","status":"queued"}`), false)
	return m
}

var tableNow = t0.Add(10 * time.Second)

func TestTableFitsEveryWidth(t *testing.T) {
	m := sampleModel()
	for _, width := range []int{20, 32, 40, 60, 80, 120, 200} {
		for _, color := range []bool{false, true} {
			lines := Table(m, tableNow, TableOptions{Width: width, Height: 30, Color: color, MultiTopic: true, Topics: "proj.1, proj.2", State: "live"})
			for i, l := range lines {
				if w := textWidth(l); w > width {
					t.Errorf("Table(width %d, color %v) line %d is %d cells: %q", width, color, i, w, l)
				}
			}
		}
	}
}

func TestTableColumnsAndOrder(t *testing.T) {
	lines := Table(sampleModel(), tableNow, TableOptions{Width: 120, Height: 30, MultiTopic: true, Topics: "proj.1, proj.2", State: "live"})
	if !strings.HasPrefix(lines[0], "hub watch proj.1, proj.2 · live · 4 workflows · 1 failed · 1 stalled · 1 running · 1 queued") {
		t.Errorf("status line = %q", lines[0])
	}
	if got := strings.Fields(lines[1]); strings.Join(got, " ") != "TOPIC WORKFLOW PROGRESS STEP STATUS ETA AGE" {
		t.Errorf("headings = %q", lines[1])
	}
	want := []struct{ label, status, bar string }{
		{"wf-bad", "failed", "80%"}, {"wf-slow", "stalled", "25%"}, {"Reindex 検索", "running", "50%"}, {"wf-q", "queued", ""},
	}
	for i, w := range want {
		row := lines[2+i]
		if !strings.Contains(row, w.label) || !strings.Contains(row, " "+w.status+" ") || !strings.Contains(row, w.bar) {
			t.Errorf("row %d = %q, want %s, %s, %s", i, row, w.label, w.status, w.bar)
		}
	}
	// A 50% bar is half full; the bar's cells are the progress column less " 100%".
	row := lines[4]
	full, empty := strings.Count(row, "█"), strings.Count(row, "░")
	if full == 0 || full != empty {
		t.Errorf("running row's bar: %d full, %d empty cells, want half and half: %q", full, empty, row)
	}
	if !strings.Contains(row, "1m55s") {
		t.Errorf("running row = %q, want its ETA 1m55s (125s from its event, 10s later)", row)
	}
	if !strings.Contains(lines[5], "waiting") {
		t.Errorf("queued row = %q, want step 'waiting'", lines[5])
	}
}

func TestTableNarrowDropsColumns(t *testing.T) {
	lines := Table(sampleModel(), tableNow, TableOptions{Width: 40, Height: 30, MultiTopic: true})
	head := strings.Join(strings.Fields(lines[1]), " ")
	if head != "WORKFLOW PROGRESS STATUS AGE" {
		t.Errorf("headings at 40 columns = %q, want WORKFLOW PROGRESS STATUS AGE (topic, step and ETA dropped)", head)
	}
	lines = Table(sampleModel(), tableNow, TableOptions{Width: 24, Height: 30})
	if head := strings.Join(strings.Fields(lines[1]), " "); head != "WORKFLOW STATUS" {
		t.Errorf("headings at 24 columns = %q, want WORKFLOW STATUS", head)
	}
}

func TestTableNoColor(t *testing.T) {
	m := sampleModel()
	o := TableOptions{Width: 100, Height: 30, State: "live"}
	for _, l := range Table(m, tableNow, o) {
		if strings.Contains(l, "\x1b") {
			t.Fatalf("Table without colour has an escape sequence: %q", l)
		}
	}
	o.Color = true
	colored := strings.Join(Table(m, tableNow, o), "\n")
	for _, want := range []string{sgrBold + sgrRed + "failed", sgrBold + sgrYellow + "stalled"} {
		if !strings.Contains(colored, want) {
			t.Errorf("Table with colour lacks %q", want)
		}
	}
}

func TestTableHeightAndFooter(t *testing.T) {
	m := NewModel()
	for i := range 30 {
		m.Apply(ev("t", i+1, "progress", `{"workflow":"wf-`+string(rune('a'+i%26))+strings.Repeat("x", i/26)+`","progress":0.1}`), false)
	}
	lines := Table(m, tableNow, TableOptions{Width: 80, Height: 10})
	if len(lines) != 9 {
		t.Errorf("Table for 10 lines drew %d, want 9 (one line spare so the terminal never scrolls)", len(lines))
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, "… 24 more") {
		t.Errorf("last line = %q, want '… 23 more'", last)
	}
	small := NewModel()
	small.Apply(ev("t", 1, "progress", `{"workflow":"w","progress":0.1}`), false)
	small.Apply(ev("t", 2, "lock", `{"key":"db","state":"lost","holder":"a1"}`), false)
	lines = Table(small, tableNow, TableOptions{Width: 80, Height: 24})
	joined := strings.Join(lines, "\n")
	if !strings.Contains(joined, "── latest events") || !strings.Contains(joined, "lock db lost by a1") {
		t.Errorf("Table with room shows no latest events:\n%s", joined)
	}
}

func TestTableEmpty(t *testing.T) {
	lines := Table(NewModel(), tableNow, TableOptions{Width: 80, Height: 24, State: "connecting"})
	if !strings.Contains(strings.Join(lines, "\n"), "No workflows yet") {
		t.Errorf("empty table = %q", lines)
	}
}

func TestTableKeepsPublishedTextInert(t *testing.T) {
	m := NewModel()
	m.Apply(ev("t", 1, "progress", `{"workflow":"w","title":"evil\u001b[2J\nname","step":"a\rb","progress":0.5}`), false)
	for _, l := range Table(m, tableNow, TableOptions{Width: 80, Height: 24, State: "live"}) {
		if strings.ContainsAny(l, "\x1b\n\r") {
			t.Errorf("a published title or step reached the terminal as control characters: %q", l)
		}
	}
}

// Whatever an agent publishes, the model takes it without a panic and the table stays within its width, with no
// control character of the data's reaching the terminal.
func FuzzTableFromData(f *testing.F) {
	f.Add("progress", `{"workflow":"w","title":"T","step":"s","progress":0.5,"status":"running","eta_s":3}`)
	f.Add("health", `{"workflow":"w","verdict":"stalled"}`)
	f.Add("progress", `{"workflow":7,"progress":"x","eta_s":"1e400","started_at":"2026-01-01T00:00:00Z"}`)
	f.Add("log", `"検索\u0000\u001b[2J"`)
	f.Fuzz(func(t *testing.T, typ, data string) {
		m := NewModel()
		m.Apply(ev("t", 1, "progress", `{"workflow":"w","progress":0.1}`), false)
		m.Apply(ev("t", 2, typ, data), false)
		m.Apply(ev("t", 3, typ, data), true)
		for _, l := range Table(m, tableNow, TableOptions{Width: 60, Height: 20, State: "live"}) {
			if w := textWidth(l); w > 60 {
				t.Fatalf("line of %d cells at width 60: %q", w, l)
			}
			if strings.ContainsAny(l, "\x1b\n\r\x00") {
				t.Fatalf("a control character reached the table: %q", l)
			}
		}
	})
}

func TestTableSaysASnapshotWasCutShort(t *testing.T) {
	var out strings.Builder
	s := &Screen{W: &out, Topics: []string{"t"}, Model: NewModel()}
	s.Snapshot("t", []Event{ev("t", 1, "progress", `{"workflow":"w"}`)}, true)
	if l := Table(s.Model, tableNow, TableOptions{Width: 120, Height: 10})[0]; !strings.Contains(l, "snapshot cut short: t") {
		t.Errorf("status line after a truncated snapshot = %q, want it said", l)
	}
	s.Snapshot("t", nil, false)
	if l := Table(s.Model, tableNow, TableOptions{Width: 120, Height: 10})[0]; strings.Contains(l, "cut short") {
		t.Errorf("status line after a whole snapshot = %q, still says cut short", l)
	}
}
