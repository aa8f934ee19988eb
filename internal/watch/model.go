package watch

import (
	"encoding/json"
	"errors"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Event is one event as the watch received it.
type Event struct {
	Topic string
	ID    string // empty for control frames and ephemeral events
	Type  string
	Data  json.RawMessage // one JSON value; data that is not JSON arrives as a JSON string
	Time  time.Time       // when Redis stored it (from its id, never after it came), else when it came
	Trace string          // the publisher's trace id, when the event carries one
}

var terminal = map[string]bool{"succeeded": true, "failed": true, "cancelled": true}

// Workflow is one row of the table: the state of one workflow id on one topic, as the console's card shows it.
type Workflow struct {
	Topic, ID                   string
	Title, Step, Message, Agent string
	Status                      string // as published; Shown gives what the table says
	Progress                    float64
	HasProgress                 bool
	ETA                         time.Time // zero when unknown
	FirstAt, LastAt, EndedAt    time.Time
	LastID                      string
	Verdict, VerdictID          string // the hub's latest health verdict that still holds ("stalled")
	Duplicate                   string // the lease key of a duplicate run the hub reported
	Events                      int
}

// Label is what names the workflow in the table: its title, else its id.
func (w *Workflow) Label() string {
	if w.Title != "" {
		return w.Title
	}
	return w.ID
}

// Shown is the status the table shows: "stalled" while the hub's verdict says so, else the status when it is one the
// contract names, else "unknown".
func (w *Workflow) Shown() string {
	if w.Verdict == "stalled" {
		return "stalled"
	}
	switch w.Status {
	case "queued", "running", "succeeded", "failed", "cancelled":
		return w.Status
	}
	return "unknown"
}

// rank orders rows as the console's cards: what needs a human first.
var rank = map[string]int{"failed": 0, "stalled": 1, "running": 2, "queued": 3, "unknown": 3, "cancelled": 4, "succeeded": 5}

// Model is the watch's state: workflows by topic and id, and the latest events as log lines. It is used from one
// goroutine.
type Model struct {
	workflows map[wfKey]*Workflow
	changed   map[wfKey]time.Time // when each workflow's shown status last changed, for ordering failures
	recent    []LogLine
	idem      *recentSet
	// Resets counts the resets handled.
	Resets int
	// truncated holds the topics whose last snapshot was cut short by the hub's limit.
	truncated map[string]bool
	// watching is each topic's streams across the hubs, from its latest presence frame.
	watching map[string]int
}

// setWatching takes a topic's count from a presence frame's data ({"topic","count",...}).
func (m *Model) setWatching(topic string, data json.RawMessage) {
	var p struct {
		Topic string `json:"topic"`
		Count *int   `json:"count"`
	}
	if json.Unmarshal(data, &p) != nil || p.Count == nil {
		return
	}
	if topic == "" {
		topic = p.Topic
	}
	if m.watching == nil {
		m.watching = map[string]int{}
	}
	m.watching[topic] = *p.Count
}

// Watching is the streams watching the followed topics across the hubs, and whether any presence frame came.
func (m *Model) Watching() (int, bool) {
	n := 0
	for _, c := range m.watching {
		n += c
	}
	return n, len(m.watching) > 0
}

type wfKey struct{ topic, workflow string }

// recentLimit is how many log lines the model keeps for the table's footer.
const recentLimit = 50

// NewModel returns an empty model.
func NewModel() *Model {
	return &Model{workflows: map[wfKey]*Workflow{}, changed: map[wfKey]time.Time{}, idem: newRecentSet(50000),
		truncated: map[string]bool{}}
}

// progressData is the part of an event's data the model reads; every field is optional and, as in the console,
// a number may come as text and a text as a number.
type progressData struct {
	Workflow, Title, Step, Message, Agent, Status json.RawMessage
	Progress                                      json.RawMessage `json:"progress"`
	ETA                                           json.RawMessage `json:"eta_s"`
	StartedAt                                     json.RawMessage `json:"started_at"`
	IdempotencyKey                                json.RawMessage `json:"idempotency_key"`
	Verdict, Key                                  json.RawMessage
}

// workflowID is the data's workflow field as the console reads it: a string, or a number written as text.
func (d *progressData) workflowID() string {
	s, ok := textOf(d.Workflow)
	if !ok || (len(d.Workflow) > 0 && d.Workflow[0] != '"' && !isNumber(d.Workflow)) {
		return ""
	}
	return s
}

// textOf is a JSON value as the console's String() gives it; false when absent or null.
func textOf(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	return string(raw), true
}

// numberOf is a JSON number, or a string holding one, as the console's Number() reads it.
func numberOf(raw json.RawMessage) (float64, bool) {
	s, ok := textOf(raw)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
}

func isNumber(raw json.RawMessage) bool {
	var f float64
	return json.Unmarshal(raw, &f) == nil
}

func setText(dst *string, raw json.RawMessage) {
	if s, ok := textOf(raw); ok {
		*dst = s
	}
}

// Apply applies one event. fromSnapshot marks a snapshot's envelopes, which set state but are not news: they make
// no log line, and a workflow first seen in one has an unknown start. It reports false for an event whose
// idempotency key was applied already (an agent's retry).
func (m *Model) Apply(ev Event, fromSnapshot bool) bool {
	var d progressData
	isObj := len(ev.Data) > 0 && ev.Data[0] == '{' && decodeLoose(ev.Data, &d)
	wf := ""
	if isObj {
		wf = d.workflowID()
		if len(d.IdempotencyKey) > 0 && string(d.IdempotencyKey) != "null" {
			k := ev.Topic + "\x00" + wf + "\x00" + string(d.IdempotencyKey)
			if m.idem.has(k) {
				return false
			}
			m.idem.add(k)
		}
	}
	if !fromSnapshot {
		m.log(ev, wf)
	}
	switch {
	case wf == "":
	case ev.Type == "progress":
		m.progress(ev, wf, &d)
	case ev.Type == "health":
		m.health(ev, wf, &d)
	default:
		m.touch(ev, wf)
	}
	return true
}

func (m *Model) progress(ev Event, id string, d *progressData) {
	k := wfKey{ev.Topic, id}
	w := m.workflows[k]
	if w == nil {
		w = &Workflow{Topic: ev.Topic, ID: id, Status: "running", FirstAt: ev.Time, LastAt: ev.Time}
		m.workflows[k] = w
		m.changed[k] = ev.Time
	} else if ev.ID != "" && w.LastID != "" && cmpID(ev.ID, w.LastID) <= 0 {
		return // older than what the row shows already
	}
	before := w.Shown()
	setText(&w.Title, d.Title)
	setText(&w.Step, d.Step)
	setText(&w.Message, d.Message)
	setText(&w.Agent, d.Agent)
	if p, ok := numberOf(d.Progress); ok {
		w.Progress, w.HasProgress = min(1, max(0, p)), true
	}
	if eta, ok := numberOf(d.ETA); ok {
		w.ETA = ev.Time.Add(time.Duration(eta * float64(time.Second)))
	} else if _, present := textOf(d.ETA); present {
		w.ETA = time.Time{} // an ETA that is no number says "unknown", as in the console
	}
	started := false
	if s, ok := textOf(d.StartedAt); ok {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			w.FirstAt, started = t, true
		}
	}
	if s, ok := textOf(d.Status); ok {
		m.setStatus(w, s, ev.Time, started)
	}
	if terminal[w.Status] {
		w.ETA = time.Time{}
	}
	if ev.Time.After(w.LastAt) {
		w.LastAt = ev.Time
	}
	if ev.ID != "" {
		w.LastID = ev.ID
		// A newer event ends a stall at once; the hub's "recovered" follows.
		if w.Verdict == "stalled" && cmpID(ev.ID, w.VerdictID) > 0 {
			w.Verdict = ""
		}
	}
	w.Events++
	if w.Shown() != before {
		m.changed[k] = ev.Time
	}
}

func (m *Model) setStatus(w *Workflow, status string, at time.Time, started bool) {
	if terminal[status] && !terminal[w.Status] {
		w.EndedAt = at
	}
	if !terminal[status] {
		w.EndedAt = time.Time{}
	}
	// Time spent queued is not work: elapsed starts when the workflow leaves the queue.
	if w.Status == "queued" && status != "queued" && !started {
		w.FirstAt = at
	}
	w.Status = status
}

// health applies the hub's verdict on a known workflow.
func (m *Model) health(ev Event, id string, d *progressData) {
	k := wfKey{ev.Topic, id}
	w := m.workflows[k]
	if w == nil || (ev.ID != "" && w.VerdictID != "" && cmpID(ev.ID, w.VerdictID) <= 0) {
		return
	}
	if v, _ := textOf(d.Verdict); v == "stalled" && ev.ID != "" && w.LastID != "" && cmpID(ev.ID, w.LastID) < 0 {
		return // the workflow moved on after the verdict
	}
	before := w.Shown()
	if ev.ID != "" {
		w.VerdictID = ev.ID
	}
	verdict, _ := textOf(d.Verdict)
	switch verdict {
	case "stalled":
		w.Verdict = "stalled"
	case "recovered":
		w.Verdict = ""
	case "duplicate":
		w.Duplicate, _ = textOf(d.Key)
	}
	if w.Shown() != before {
		m.changed[k] = ev.Time
	}
}

// touch notes that a known workflow is alive: any event naming it proves that.
func (m *Model) touch(ev Event, id string) {
	if w := m.workflows[wfKey{ev.Topic, id}]; w != nil && ev.Time.After(w.LastAt) {
		w.LastAt = ev.Time
	}
}

// ClearTopic forgets a topic's workflows before its snapshot is applied again.
func (m *Model) ClearTopic(topic string) {
	for k := range m.workflows {
		if k.topic == topic {
			delete(m.workflows, k)
			delete(m.changed, k)
		}
	}
}

func (m *Model) setTruncated(topic string, cut bool) {
	if cut {
		m.truncated[topic] = true
	} else {
		delete(m.truncated, topic)
	}
}

// Truncated is the topics whose snapshot was cut short, sorted: their table may miss workflows until they publish.
func (m *Model) Truncated() []string {
	out := make([]string, 0, len(m.truncated))
	for t := range m.truncated {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Len is the number of workflows.
func (m *Model) Len() int { return len(m.workflows) }

// Workflows returns the rows in the console's order: failed (newest failure first), stalled, running, queued,
// cancelled, succeeded; then by topic and label, numbers in names compared as numbers.
func (m *Model) Workflows() []*Workflow {
	out := make([]*Workflow, 0, len(m.workflows))
	for _, w := range m.workflows {
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		ra, rb := rank[a.Shown()], rank[b.Shown()]
		if ra != rb {
			return ra < rb
		}
		ca, cb := m.changed[wfKey{a.Topic, a.ID}], m.changed[wfKey{b.Topic, b.ID}]
		if ra == 0 && !ca.Equal(cb) {
			return ca.After(cb)
		}
		if c := naturalCompare(a.Topic, b.Topic); c != 0 {
			return c < 0
		}
		if c := naturalCompare(a.Label(), b.Label()); c != 0 {
			return c < 0
		}
		return a.ID < b.ID
	})
	return out
}

// Counts is the number of workflows per shown status.
func (m *Model) Counts() map[string]int {
	c := map[string]int{}
	for _, w := range m.workflows {
		c[w.Shown()]++
	}
	return c
}

// idTime is the Redis time at which the event with stream id id was stored, or the zero time.
func idTime(id string) time.Time {
	ms, _, ok := strings.Cut(id, "-")
	if !ok {
		return time.Time{}
	}
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(n)
}

// decodeLoose decodes an object into v, keeping the fields that fit when another has the wrong type (a progress
// written as text does not hide the step beside it).
func decodeLoose(data []byte, v any) bool {
	err := json.Unmarshal(data, v)
	var typeErr *json.UnmarshalTypeError
	return err == nil || errors.As(err, &typeErr)
}
