package watch

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// LogLine is one event as the console's log shows it.
type LogLine struct {
	Time                  time.Time
	Topic, Type, Workflow string
	ID                    string
	Text                  string
	Level                 string // info, warn or error
	Trace                 string // the publisher's trace id, or ""
}

// lineOf is the log line of ev, naming workflow.
func lineOf(ev Event, workflow string) LogLine {
	return LogLine{Time: ev.Time, Topic: ev.Topic, Type: ev.Type, Workflow: workflow, ID: ev.ID,
		Text: Summarize(ev.Type, ev.Data), Level: level(ev.Type, ev.Data), Trace: ev.Trace}
}

// traceID keeps a trace: field that is a trace id (32 lowercase hex digits, not all zero), else "".
func traceID(s string) string {
	if len(s) != 32 || s == "00000000000000000000000000000000" {
		return ""
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return ""
		}
	}
	return s
}

func (m *Model) log(ev Event, workflow string) { m.note(lineOf(ev, workflow)) }

// note adds a line to the latest events: an event's, or the watch's own (a reset).
func (m *Model) note(line LogLine) {
	if len(m.recent) >= recentLimit {
		m.recent = append(m.recent[:0], m.recent[len(m.recent)-recentLimit/2:]...)
	}
	m.recent = append(m.recent, line)
}

// Recent returns up to n of the latest log lines, oldest first.
func (m *Model) Recent(n int) []LogLine {
	if n <= 0 {
		return nil
	}
	if n > len(m.recent) {
		n = len(m.recent)
	}
	return m.recent[len(m.recent)-n:]
}

// Summarize describes an event's data in one line, as the console's log does.
func Summarize(typ string, data json.RawMessage) string {
	var v any
	if json.Unmarshal(data, &v) != nil || v == nil {
		return ""
	}
	obj, ok := v.(map[string]any)
	if !ok {
		if s, ok := v.(string); ok {
			return oneLine(s)
		}
		return compact(data)
	}
	switch typ {
	case "progress":
		return summarizeProgress(obj, data)
	case "lock":
		s := fmt.Sprintf("%s %s", text(obj["key"], "?"), text(obj["state"], ""))
		if h := text(obj["holder"], ""); h != "" {
			s += " by " + h
		}
		if f, ok := obj["fence"].(float64); ok {
			s += " · fence " + strconv.FormatFloat(f, 'f', -1, 64)
		}
		if ttl, ok := obj["ttl_ms"].(float64); ok {
			s += " · ttl " + Duration(time.Duration(ttl)*time.Millisecond)
		}
		return oneLine(s)
	case "health":
		s := "hub verdict: " + text(obj["verdict"], "?")
		if k := text(obj["key"], ""); k != "" {
			s += " on " + k
		}
		if d := text(obj["detail"], ""); d != "" {
			s += " — " + d
		}
		return oneLine(s)
	}
	for _, k := range []string{"message", "msg", "text", "line"} {
		if s, ok := obj[k].(string); ok {
			return oneLine(s)
		}
	}
	return compact(data)
}

func summarizeProgress(obj map[string]any, data json.RawMessage) string {
	var parts []string
	if s := text(obj["step"], ""); s != "" {
		parts = append(parts, s)
	}
	if p, ok := obj["progress"].(float64); ok {
		parts = append(parts, Percent(p))
	}
	if s := text(obj["status"], ""); s != "" {
		parts = append(parts, s)
	}
	head := strings.Join(parts, " · ")
	if msg := text(obj["message"], ""); msg != "" {
		if head != "" {
			head += " — "
		}
		return oneLine(head + msg)
	}
	if head == "" {
		return compact(data)
	}
	return oneLine(head)
}

// text is v as text when it is a string or a number, else def.
func text(v any, def string) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return def
}

func compact(data json.RawMessage) string {
	s := oneLine(string(data))
	if r := []rune(s); len(r) > 400 {
		return string(r[:399]) + "…"
	}
	return s
}

// oneLine keeps a text on one line of the terminal: control characters (line breaks, escapes, DEL, C1) and the
// bidirectional overrides become spaces, so a message can neither break the table, move the cursor nor reorder
// what is shown after it.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || hiddenOnTerminal(r) {
			return ' '
		}
		return r
	}, s)
}

// level is the log level the console gives an event.
func level(typ string, data json.RawMessage) string {
	var d struct {
		Status  string `json:"status"`
		State   string `json:"state"`
		Level   string `json:"level"`
		Verdict string `json:"verdict"`
	}
	_ = decodeLoose(data, &d)
	switch {
	case typ == "progress" && d.Status == "failed":
		return "error"
	case typ == "progress" && d.Status == "cancelled":
		return "warn"
	case typ == "progress":
		return "info"
	case typ == "lock" && (d.State == "lost" || d.State == "expired"):
		return "error"
	case typ == "lock":
		return "info"
	case typ == "health" && (d.Verdict == "stalled" || d.Verdict == "duplicate"):
		return "warn"
	case typ == "error" || d.Level == "error":
		return "error"
	case typ == "warn" || typ == "warning" || d.Level == "warn" || d.Level == "warning":
		return "warn"
	}
	return "info"
}

// Percent is p (0..1) as a whole percentage.
func Percent(p float64) string {
	return strconv.Itoa(int(min(1, max(0, p))*100+0.5)) + "%"
}

// Duration is d, compact, for a table column: "42s", "3m05s", "2h07m", "3d4h".
func Duration(d time.Duration) string {
	s := int64(max(0, d+500*time.Millisecond) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	case s < 48*3600:
		return fmt.Sprintf("%dh%02dm", s/3600, s/60%60)
	}
	return fmt.Sprintf("%dd%dh", s/86400, s/3600%24)
}

// naturalCompare orders strings case-insensitively with digit runs compared as numbers, so wf-9 sorts before wf-10.
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(na) != len(nb) {
				return len(na) - len(nb)
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		ra, rb := unicode.ToLower(rune(a[0])), unicode.ToLower(rune(b[0]))
		if ra != rb {
			return int(ra) - int(rb)
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func digitRun(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// recentSet is a bounded set that forgets its oldest keys first.
type recentSet struct {
	limit int
	set   map[string]struct{}
	order []string
}

func newRecentSet(limit int) *recentSet {
	return &recentSet{limit: limit, set: map[string]struct{}{}}
}

func (r *recentSet) has(k string) bool { _, ok := r.set[k]; return ok }

func (r *recentSet) add(k string) {
	r.set[k] = struct{}{}
	r.order = append(r.order, k)
	if len(r.order) > r.limit+r.limit/4 {
		// Forgetting in chunks keeps the copy off the per-event path.
		drop := len(r.order) - r.limit
		for _, old := range r.order[:drop] {
			delete(r.set, old)
		}
		r.order = append(r.order[:0], r.order[drop:]...)
	}
}
