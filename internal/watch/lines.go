package watch

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// levelStyle colours a log line by its level.
var levelStyle = map[string]string{"error": sgrRed, "warn": sgrYellow}

// formatLine is one log line: the time it was stored, its topic (withTopic), type, workflow and summary.
func formatLine(l LogLine, withTopic, color bool) string {
	parts := []string{l.Time.Local().Format("15:04:05.000")}
	if withTopic && l.Topic != "" {
		parts = append(parts, l.Topic)
	}
	parts = append(parts, l.Type)
	if l.Workflow != "" {
		parts = append(parts, l.Workflow)
	}
	if l.Text != "" {
		parts = append(parts, l.Text)
	}
	if l.Trace != "" {
		parts = append(parts, "trace="+l.Trace)
	}
	// The hub validates topics and types, but nothing from the wire reaches the terminal as control.
	return paint(color, levelStyle[l.Level], oneLine(strings.Join(parts, " ")))
}

// logLine is a footer line of the table, fitted to width.
func logLine(l LogLine, withTopic, color bool, width int) string {
	return fitStyled(formatLine(l, withTopic, color), width)
}

// controlLine describes one of the hub's control frames for people.
func controlLine(ev Event) LogLine {
	var d struct {
		Reason string `json:"reason"`
		Oldest string `json:"oldest"`
	}
	_ = decodeLoose(ev.Data, &d)
	l := LogLine{Time: ev.Time, Topic: ev.Topic, Type: ev.Type, Level: "warn"}
	switch ev.Type {
	case "reset":
		l.Text = fmt.Sprintf("%s (oldest stored %s): the history no longer reaches the position; snapshot reloaded",
			cmp.Or(d.Reason, "reset"), cmp.Or(d.Oldest, "?"))
	case "auth-expired":
		l.Text = "the credentials expired; reconnecting with the token read again"
	}
	return l
}

// notes tells people on stderr how the connection goes: a problem, and the recovery after one.
type notes struct {
	w        io.Writer
	troubled bool
}

func (n *notes) State(state, detail string) {
	switch state {
	case "reconnecting":
		n.troubled = true
		fmt.Fprintf(n.w, "hub watch: %s\n", detail)
	case "live":
		if n.troubled {
			fmt.Fprintln(n.w, "hub watch: live again")
		}
		n.troubled = false
	}
}

// Lines is the plain sink: one line per event on W, the connection's troubles on Notes.
type Lines struct {
	W, Notes io.Writer
	Color    bool
	n        *notes
}

func (l *Lines) Snapshot(string, []Event, bool) {}

func (l *Lines) Event(ev Event) {
	var d progressData
	wf := ""
	if decodeLoose(ev.Data, &d) {
		wf = d.workflowID()
	}
	fmt.Fprintln(l.W, formatLine(lineOf(ev, wf), true, l.Color))
}

func (l *Lines) Control(ev Event) { fmt.Fprintln(l.W, formatLine(controlLine(ev), true, l.Color)) }

func (l *Lines) State(state, detail string) {
	if l.n == nil {
		l.n = &notes{w: l.Notes}
	}
	l.n.State(state, detail)
}

func (l *Lines) Tick(time.Time) {}

// JSON is the pass-through sink: each event, control frames too, as one JSON line
// {"topic","id","type","data","time"} and "trace" when the event carries one; the id is absent for control frames
// and ephemeral events.
type JSON struct {
	W, Notes io.Writer
	// Terminal: W is a terminal, so the characters it would act on or reorder by (DEL, C1 controls, bidi
	// overrides) are written as \uXXXX escapes; the line decodes to the same event.
	Terminal bool
	n        *notes
}

type jsonLine struct {
	Topic string          `json:"topic"`
	ID    string          `json:"id,omitempty"`
	Type  string          `json:"type"`
	Data  json.RawMessage `json:"data"`
	Time  time.Time       `json:"time"`
	Trace string          `json:"trace,omitempty"`
}

func (j *JSON) Snapshot(string, []Event, bool) {}

func (j *JSON) Event(ev Event) {
	var data bytes.Buffer
	if json.Compact(&data, ev.Data) != nil {
		data.Reset()
		data.WriteString("null")
	}
	b, _ := json.Marshal(jsonLine{Topic: ev.Topic, ID: ev.ID, Type: ev.Type, Data: data.Bytes(), Time: ev.Time.UTC(), Trace: ev.Trace})
	if j.Terminal {
		b = escapeJSONForTerminal(b)
	}
	j.W.Write(append(b, '\n'))
}

func (j *JSON) Control(ev Event) { j.Event(ev) }

func (j *JSON) State(state, detail string) {
	if j.n == nil {
		j.n = &notes{w: j.Notes}
	}
	j.n.State(state, detail)
}

func (j *JSON) Tick(time.Time) {}
