package eventschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/rig"
)

// recorder is a hub.Broadcaster that keeps what it is given.
type recorder struct{ got []*hub.Event }

func (r *recorder) Broadcast(ev *hub.Event) { r.got = append(r.got, ev) }

type checked struct {
	c   *Checker
	reg *prometheus.Registry
	log *bytes.Buffer
}

func newChecked(t *testing.T, mode Mode) checked {
	t.Helper()
	reg, buf := prometheus.NewRegistry(), &bytes.Buffer{}
	return checked{c: NewChecker(docsSchemas(t), mode, 0, reg, zerolog.New(buf)), reg: reg, log: buf}
}

func (k checked) invalid(t *testing.T, typ, at string) float64 {
	t.Helper()
	v, ok := rig.MetricValue(rig.Gather(t, k.reg), "hub_events_invalid_total", "type="+typ, "at="+at)
	if !ok {
		t.Fatalf("hub_events_invalid_total{type=%s,at=%s} is not a series", typ, at)
	}
	return v
}

// logLines decodes the checker's log, one JSON object a line.
func (k checked) logLines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(k.log.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// Each mode at publish: off checks nothing, warn lets the event through counted and logged, strict refuses it with
// the problem, counted and logged too; data that fits passes every mode silently.
func TestCheckerPublishInEachMode(t *testing.T) {
	bad, good := []byte(`{"workflow":"wf-1","progress":40}`), []byte(`{"workflow":"wf-1","progress":0.4}`)
	for _, c := range []struct {
		mode    Mode
		refused bool
		counted float64
		verdict string
	}{
		{Off, false, 0, ""},
		{Warn, false, 1, "stored as it is (events.validation: warn)"},
		{Strict, true, 1, "refused (events.validation: strict)"},
	} {
		k := newChecked(t, c.mode)
		if w, err := k.c.Publish("t", "progress", good); err != nil || w != nil {
			t.Errorf("%s: Publish of good data = %q, %v, want nil, nil", c.mode, w, err)
		}
		warnings, err := k.c.Publish("t", "progress", bad)
		if want := c.mode == Warn; want != (len(warnings) == 1 && warnings[0] == "progress: 40 is not between 0 and 1") ||
			!want && warnings != nil {
			t.Errorf("%s: Publish(progress 40) warnings = %q", c.mode, warnings)
		}
		var inv *Invalid
		if got := errors.As(err, &inv); got != c.refused {
			t.Errorf("%s: Publish(progress 40) = %v, want refused %v", c.mode, err, c.refused)
		}
		if v := k.invalid(t, "progress", AtPublish); v != c.counted {
			t.Errorf("%s: hub_events_invalid_total{type=progress,at=publish} = %v, want %v", c.mode, v, c.counted)
		}
		lines := k.logLines(t)
		if c.verdict == "" {
			if len(lines) != 0 {
				t.Errorf("%s: logged %v, want nothing", c.mode, lines)
			}
			continue
		}
		if len(lines) != 1 || lines[0]["level"] != "warn" || lines[0]["topic"] != "t" || lines[0]["type"] != "progress" ||
			lines[0]["at"] != "publish" || lines[0]["problem"] != "progress: 40 is not between 0 and 1" ||
			lines[0]["message"] != "event data does not match docs/schemas/progress.json: "+c.verdict {
			t.Errorf("%s: logged %v, want one warning naming topic t, type progress, at publish, the problem and %q", c.mode, lines, c.verdict)
		}
	}
}

// On receipt nothing is ever dropped, in any mode: a bad event of a known type is counted and logged with its id
// (strict too), an unknown type is not looked at, and mode off passes the broadcaster through untouched.
func TestCheckerReceivingNeverDrops(t *testing.T) {
	evs := []*hub.Event{
		{Topic: "t", IDText: "5-0", Type: "lock", Data: []byte(`{"key":"db","holder":"a","fence":1,"state":"taken","ttl_ms":5}`)},
		{Topic: "t", IDText: "6-0", Type: "progress", Data: []byte(`{"workflow":"wf-1","status":"running"}`)},
		{Topic: "t", IDText: "7-0", Type: "build-log", Data: []byte(`{"progress":40}`)},
		{Topic: "t", Type: "progress", Data: []byte(`{"workflow":"wf-1","status":"runing"}`), Source: hub.SourceEphemeral},
	}
	for _, mode := range Modes {
		k := newChecked(t, mode)
		rec := &recorder{}
		b := k.c.Receiving(rec)
		for _, ev := range evs {
			b.Broadcast(ev)
		}
		if len(rec.got) != len(evs) {
			t.Errorf("%s: %d of %d events passed on, want all", mode, len(rec.got), len(evs))
		}
		want := 1.0
		if mode == Off {
			want = 0
			if b != hub.Broadcaster(rec) {
				t.Errorf("off: Receiving wrapped the broadcaster, want it as it is")
			}
		}
		if l, p := k.invalid(t, "lock", AtReceipt), k.invalid(t, "progress", AtReceipt); l != want || p != want {
			t.Errorf("%s: invalid on receipt: lock %v, progress %v; want %v each", mode, l, p, want)
		}
		if mode == Off {
			continue
		}
		lines := k.logLines(t)
		if len(lines) != 2 || lines[0]["id"] != "5-0" || lines[0]["at"] != "receipt" ||
			lines[0]["problem"] != `state: "taken" is not one of acquired, renewed, released, lost, expired` ||
			lines[0]["message"] != "event data does not match docs/schemas/lock.json: delivered as it is" || lines[1]["id"] != nil {
			t.Errorf("%s: logged %v, want the lock's problem with id 5-0 and the ephemeral progress's without an id", mode, lines)
		}
	}
}

// A (topic, type) that keeps sending bad data logs once a minute, the next line saying how many were held back;
// another topic or another type has a line of its own; every event is counted regardless.
func TestCheckerLogsOncePerTopicAndTypeAMinute(t *testing.T) {
	k := newChecked(t, Warn)
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	k.c.limit.now = func() time.Time { return now }
	bad := []byte(`{"workflow":"wf-1","progress":40}`)
	badLock := []byte(`{"key":"db","holder":"a","fence":1,"state":"taken","ttl_ms":5}`)
	for i := 0; i < 5; i++ {
		_, _ = k.c.Publish("a", "progress", bad)
	}
	_, _ = k.c.Publish("b", "progress", bad)
	_, _ = k.c.Publish("a", "lock", badLock)
	now = now.Add(59 * time.Second)
	_, _ = k.c.Publish("a", "progress", bad)
	now = now.Add(time.Second)
	_, _ = k.c.Publish("a", "progress", bad)
	var got []string
	for _, l := range k.logLines(t) {
		got = append(got, l["topic"].(string)+"/"+l["type"].(string)+"/"+jsonText(l["suppressed"]))
	}
	if want := "a/progress/0 b/progress/0 a/lock/0 a/progress/5"; strings.Join(got, " ") != want {
		t.Errorf("log lines (topic/type/suppressed) %v, want %s", got, want)
	}
	if v := k.invalid(t, "progress", AtPublish); v != 8 {
		t.Errorf("hub_events_invalid_total{type=progress,at=publish} = %v, want 8", v)
	}
}

// A publisher spreading bad data over 10,000 topics in a minute gets DefaultLogLines lines, not 10,000 (before the
// budget, past maxLogKeys pairs the limiter forgot them all and logged nearly every event); every event is counted;
// a minute later the budget is whole again, and a pair held back says so in its next line.
func TestCheckerLogsAtMostTheBudgetAMinuteAcrossTopics(t *testing.T) {
	k := newChecked(t, Warn)
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	k.c.limit.now = func() time.Time { return now }
	b := k.c.Receiving(&recorder{})
	bad := []byte(`{"p":1,"s":2}`)
	for i := range 10000 {
		b.Broadcast(&hub.Event{Topic: "t." + strconv.Itoa(i), IDText: "1-0", Type: "progress", Data: bad})
	}
	if n := len(k.logLines(t)); n != DefaultLogLines {
		t.Errorf("10,000 topics' bad events logged %d lines in a minute, want the budget, %d", n, DefaultLogLines)
	}
	if v := k.invalid(t, "progress", AtReceipt); v != 10000 {
		t.Errorf("hub_events_invalid_total{type=progress,at=receipt} = %v, want 10000", v)
	}
	if v, _ := rig.MetricValue(rig.Gather(t, k.reg), "hub_events_invalid_logs_suppressed_total"); v != 10000-DefaultLogLines {
		t.Errorf("hub_events_invalid_logs_suppressed_total = %v, want %d", v, 10000-DefaultLogLines)
	}
	now = now.Add(time.Minute)
	b.Broadcast(&hub.Event{Topic: "t.9999", IDText: "2-0", Type: "progress", Data: bad})
	lines := k.logLines(t)
	if last := lines[len(lines)-1]; len(lines) != DefaultLogLines+1 || last["topic"] != "t.9999" || jsonText(last["suppressed"]) != "1" {
		t.Errorf("a minute later: %d lines, last %v; want one more, for t.9999, saying 1 was held back", len(lines), last)
	}
}

// The limiter stays bounded: past its keys it forgets those quiet for an interval, and all when none is.
func TestLimiterForgetsPastItsBound(t *testing.T) {
	now := time.Unix(0, 0)
	l := newLimiter(time.Minute, 2, 100, func() time.Time { return now })
	l.allow("a")
	now = now.Add(2 * time.Minute)
	l.allow("b")
	l.allow("c") // a is quiet for two minutes: forgotten
	if _, ok := l.seen["a"]; ok || len(l.seen) != 2 {
		t.Errorf("after a, b, c with room for 2: remembers %v, want b and c", l.seen)
	}
	l.allow("d") // b and c are fresh: all forgotten but d
	if len(l.seen) != 1 || l.seen["d"] == nil {
		t.Errorf("after d with b and c fresh: remembers %v, want d only", l.seen)
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestCheckModeNamesTheChoices(t *testing.T) {
	for _, m := range Modes {
		if err := CheckMode(m); err != nil {
			t.Errorf("CheckMode(%q) = %v", m, err)
		}
	}
	if err := CheckMode("maybe"); err == nil || err.Error() != `"maybe" is not off, warn or strict` {
		t.Errorf(`CheckMode("maybe") = %v, want "\"maybe\" is not off, warn or strict"`, err)
	}
}
