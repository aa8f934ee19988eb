package watch

import (
	"fmt"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)

// ev is a stored event of topic t with id ms-0, stored at t0+ms milliseconds.
func ev(topic string, ms int, typ, data string) Event {
	return Event{Topic: topic, ID: fmt.Sprintf("%d-0", ms), Type: typ, Data: []byte(data), Time: t0.Add(time.Duration(ms) * time.Millisecond)}
}

func TestModelProgress(t *testing.T) {
	m := NewModel()
	m.Apply(ev("t", 1, "progress", `{"workflow":"wf-1","title":"Build","step":"compile","progress":0.4,"status":"running","eta_s":30,"agent":"a1"}`), false)
	m.Apply(ev("t", 2, "progress", `{"workflow":"wf-1","step":"link","progress":"0.9"}`), false) // progress as text, as the console reads it
	w := m.Workflows()[0]
	if w.Label() != "Build" || w.Step != "link" || w.Progress != 0.9 || !w.HasProgress || w.Status != "running" || w.Agent != "a1" {
		t.Errorf("after two events: %+v, want title Build, step link, progress 0.9, running, agent a1", w)
	}
	if want := t0.Add(time.Millisecond + 30*time.Second); !w.ETA.Equal(want) {
		t.Errorf("ETA = %v, want %v (the first event's time + eta_s)", w.ETA, want)
	}
	m.Apply(ev("t", 3, "progress", `{"workflow":"wf-1","progress":1.7,"status":"succeeded"}`), false)
	if w.Progress != 1 || !w.ETA.IsZero() || w.EndedAt.IsZero() || w.Shown() != "succeeded" {
		t.Errorf("after succeeded: progress %v, ETA %v, ended %v, shown %s; want 1 (clamped), no ETA, ended, succeeded",
			w.Progress, w.ETA, w.EndedAt, w.Shown())
	}
	m.Apply(ev("t", 2, "progress", `{"workflow":"wf-1","status":"running"}`), false)
	if w.Status != "succeeded" {
		t.Errorf("an older event (2-0 after 3-0) changed the status to %s", w.Status)
	}
	m.Apply(ev("t", 4, "progress", `{"workflow":42,"status":"weird"}`), false)
	if w := m.Workflows()[0]; w.ID != "42" || w.Shown() != "unknown" {
		t.Errorf("numeric workflow id and an unknown status: first row %s shown %s, want 42 shown unknown", w.ID, w.Shown())
	}
}

func TestModelOrder(t *testing.T) {
	m := NewModel()
	for i, d := range []string{
		`{"workflow":"wf-10","status":"running"}`,
		`{"workflow":"wf-9","status":"running"}`,
		`{"workflow":"ok","status":"succeeded"}`,
		`{"workflow":"q","status":"queued"}`,
		`{"workflow":"old-fail","status":"failed"}`,
		`{"workflow":"new-fail","status":"failed"}`,
		`{"workflow":"slow","status":"running"}`,
	} {
		m.Apply(ev("t", 10+i, "progress", d), false)
	}
	m.Apply(ev("t", 30, "health", `{"workflow":"slow","verdict":"stalled","since":"x"}`), false)
	var got []string
	for _, w := range m.Workflows() {
		got = append(got, w.ID+":"+w.Shown())
	}
	want := "[new-fail:failed old-fail:failed slow:stalled wf-9:running wf-10:running q:queued ok:succeeded]"
	if fmt.Sprint(got) != want {
		t.Errorf("Workflows() order = %v, want %s", got, want)
	}
	if c := m.Counts(); c["stalled"] != 1 || c["failed"] != 2 || c["running"] != 2 {
		t.Errorf("Counts() = %v", c)
	}
}

func TestModelHealthVerdicts(t *testing.T) {
	m := NewModel()
	m.Apply(ev("t", 1, "progress", `{"workflow":"w","status":"running"}`), false)
	m.Apply(ev("t", 2, "health", `{"workflow":"w","verdict":"stalled"}`), false)
	w := m.Workflows()[0]
	if w.Shown() != "stalled" {
		t.Fatalf("after a stalled verdict: shown %s, want stalled", w.Shown())
	}
	m.Apply(ev("t", 3, "progress", `{"workflow":"w","step":"next"}`), false)
	if w.Shown() != "running" {
		t.Errorf("a progress event newer than the verdict: shown %s, want running", w.Shown())
	}
	m.Apply(ev("t", 2, "health", `{"workflow":"w","verdict":"stalled"}`), false)
	if w.Shown() != "running" {
		t.Errorf("a replayed verdict older than the workflow's last event made it %s", w.Shown())
	}
	m.Apply(ev("t", 4, "health", `{"workflow":"w","verdict":"stalled"}`), false)
	m.Apply(ev("t", 5, "health", `{"workflow":"w","verdict":"recovered"}`), false)
	if w.Shown() != "running" {
		t.Errorf("after recovered: shown %s, want running", w.Shown())
	}
	m.Apply(ev("t", 6, "health", `{"workflow":"nobody","verdict":"stalled"}`), false)
	if m.Len() != 1 {
		t.Errorf("a verdict on an unknown workflow made a row: %d rows", m.Len())
	}
}

func TestModelIdempotencyKeyAppliesOnce(t *testing.T) {
	m := NewModel()
	if !m.Apply(ev("t", 1, "progress", `{"workflow":"w","progress":0.5,"idempotency_key":"k1"}`), false) {
		t.Fatal("first event with key k1 was not applied")
	}
	if m.Apply(ev("t", 2, "progress", `{"workflow":"w","progress":0.9,"idempotency_key":"k1"}`), false) {
		t.Error("a second event with key k1 (an agent's retry) was applied")
	}
	if w := m.Workflows()[0]; w.Progress != 0.5 || w.Events != 1 {
		t.Errorf("after the retry: progress %v, events %d; want 0.5, 1", w.Progress, w.Events)
	}
	if n := len(m.Recent(10)); n != 1 {
		t.Errorf("the retry made a log line: %d lines", n)
	}
}

func TestModelSnapshotAndClearTopic(t *testing.T) {
	m := NewModel()
	m.Apply(ev("a", 1, "progress", `{"workflow":"w1"}`), true)
	m.Apply(ev("b", 2, "progress", `{"workflow":"w2"}`), false)
	if n := len(m.Recent(10)); n != 1 {
		t.Errorf("Recent after one snapshot and one live event = %d lines, want 1 (snapshots are not news)", n)
	}
	m.ClearTopic("a")
	if ws := m.Workflows(); len(ws) != 1 || ws[0].Topic != "b" {
		t.Errorf("after ClearTopic(a): %d rows, want only b's", len(ws))
	}
}

func TestModelOtherEventsTouchAndLog(t *testing.T) {
	m := NewModel()
	m.Apply(ev("t", 1, "progress", `{"workflow":"w"}`), false)
	m.Apply(ev("t", 5000, "log", `{"workflow":"w","message":"still here"}`), false)
	if w := m.Workflows()[0]; !w.LastAt.Equal(t0.Add(5 * time.Second)) {
		t.Errorf("LastAt after a log event naming the workflow = %v, want %v", w.LastAt, t0.Add(5*time.Second))
	}
	if r := m.Recent(1); len(r) != 1 || r[0].Text != "still here" || r[0].Type != "log" {
		t.Errorf("Recent(1) = %+v, want the log line", r)
	}
	for i := range 2 * recentLimit {
		m.Apply(ev("t", 6000+i, "log", `"x"`), false)
	}
	if n := len(m.Recent(1000)); n > recentLimit {
		t.Errorf("the model keeps %d log lines, want at most %d", n, recentLimit)
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct{ typ, data, want string }{
		{"progress", `{"workflow":"w","step":"compile","progress":0.42,"status":"running","message":"ok"}`, "compile · 42% · running — ok"},
		{"progress", `{"workflow":"w"}`, `{"workflow":"w"}`},
		{"lock", `{"key":"db","state":"acquired","holder":"a1","fence":7,"ttl_ms":30000}`, "db acquired by a1 · fence 7 · ttl 30s"},
		{"health", `{"workflow":"w","verdict":"stalled","detail":"quiet 60s"}`, "hub verdict: stalled — quiet 60s"},
		{"log", `{"message":"line one\nline two"}`, "line one line two"},
		{"log", `"plain \u001b[31mtext"`, "plain  [31mtext"},
		{"log", `[1,2]`, "[1,2]"},
	}
	for _, tt := range tests {
		if got := Summarize(tt.typ, []byte(tt.data)); got != tt.want {
			t.Errorf("Summarize(%s, %s) = %q, want %q", tt.typ, tt.data, got, tt.want)
		}
	}
}

func TestDuration(t *testing.T) {
	tests := map[time.Duration]string{
		0: "0s", 42 * time.Second: "42s", 185 * time.Second: "3m05s", 2*time.Hour + 7*time.Minute: "2h07m",
		76 * time.Hour: "3d4h", -5 * time.Second: "0s",
	}
	for d, want := range tests {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
}
