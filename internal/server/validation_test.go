package server

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/internal/rig"
)

// liveStream opens a fresh /events stream on topic and returns it once the hub's live feed of the topic runs: a
// fresh stream replays nothing, so the first probe it shows came through the subscriber, and so does what follows.
func liveStream(t *testing.T, e *edge, topic string) *rig.Stream {
	t.Helper()
	s := rig.OpenStream(t, e.URL, rig.TopicQuery(topic), "")
	t.Cleanup(s.Close)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		e.publish(t, topic, "progress", `{"workflow":"probe"}`)
		select {
		case f := <-s.Frames():
			if f.Event != "" {
				return s
			}
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatalf("/events on %s: no probe arrived within 10s", topic)
	return nil
}

// nextNonProbe is the next event on s that is not liveStream's probe.
func nextNonProbe(t *testing.T, s *rig.Stream) rig.Frame {
	t.Helper()
	for {
		if f := s.NextEvent(10 * time.Second); f.Data != `{"workflow":"probe"}` {
			return f
		}
	}
}

// invalidCount is hub_events_invalid_total{type,at} on the edge.
func invalidCount(t *testing.T, e *edge, typ, at string) float64 {
	t.Helper()
	v, ok := rig.MetricValue(rig.Scrape(t, e.URL), "hub_events_invalid_total", "type="+typ, "at="+at)
	if !ok {
		t.Fatalf("hub_events_invalid_total{type=%s,at=%s} is not a series", typ, at)
	}
	return v
}

// warnings are the edge's log lines about event data, decoded.
func warnings(t *testing.T, e *edge) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(e.logs.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && strings.HasPrefix(m["message"].(string), "event data does not match") {
			out = append(out, m)
		}
	}
	return out
}

// events.validation: strict. The typos agents make are refused with 400 naming the field and what is wrong,
// nothing is stored, each is counted (as an invalid publish and as invalid data) and logged once for its topic and
// type; the hub's own types are still refused as such, a type without a schema is not looked at, and every example
// of docs/schemas that an agent may publish goes through.
func TestPublishStrictRefusesDataThatDoesNotMatch(t *testing.T) {
	e := newEdge(t, rig.StartRedisWith(t, rig.RedisOptions{}), "HUB_EVENTS_VALIDATION=strict")
	for _, c := range []struct{ body, want string }{
		{`{"topic":"t","data":{"workflow":"wf-1","progress":40}}`, "progress data does not match docs/schemas/progress.json: progress: 40 is not between 0 and 1"},
		{`{"topic":"t","type":"progress","data":{"workflow":"wf-1","status":"runing"}}`, `status: "runing" is not one of queued, running, succeeded, failed, cancelled`},
		{`{"topic":"t","type":"lock","data":{"key":"db","holder":"a","fence":"7","state":"acquired","ttl_ms":500}}`, `lock data does not match docs/schemas/lock.json: fence: "7" is a string, not an integer`},
		{`{"topic":"t","type":"health","data":{"verdict":"sick"}}`, "the hub's own"},
	} {
		if status, _, _, msg := postPublish(t, e.URL, c.body, nil); status != http.StatusBadRequest || !strings.Contains(msg, c.want) {
			t.Errorf("POST /publish %s = %d %q, want 400 with %q", c.body, status, msg, c.want)
		}
	}
	if n := e.xlen(t, "t"); n != 0 {
		t.Errorf("after refused publishes XLEN = %d, want 0", n)
	}
	fams := rig.Scrape(t, e.URL)
	if v, _ := rig.MetricValue(fams, "hub_http_publish_total", "outcome=invalid"); v != 4 {
		t.Errorf("hub_http_publish_total{outcome=invalid} = %v, want 4", v)
	}
	rig.WantByLabel(t, fams, "hub_events_invalid_total", "type", map[string]float64{"progress": 2, "lock": 1}, "at=publish")
	w := warnings(t, e)
	if len(w) != 2 || w[0]["topic"] != "t" || w[0]["type"] != "progress" || w[0]["problem"] != "progress: 40 is not between 0 and 1" ||
		w[1]["type"] != "lock" || !strings.HasSuffix(w[0]["message"].(string), "refused (events.validation: strict)") {
		t.Errorf("logged %v, want one line for t/progress (the first problem) and one for t/lock, each saying refused", w)
	}

	if status, _, _, msg := postPublish(t, e.URL, `{"topic":"t","type":"build-log","data":{"progress":40}}`, nil); status != http.StatusAccepted {
		t.Errorf("POST /publish of a type without a schema = %d %q, want 202", status, msg)
	}
	for _, typ := range []string{"progress", "lock"} {
		for i, ex := range schemaExamples(t, typ) {
			body, _ := json.Marshal(map[string]any{"topic": "examples", "type": typ, "data": ex})
			if status, _, _, msg := postPublish(t, e.URL, string(body), nil); status != http.StatusAccepted {
				t.Errorf("strict: POST /publish of docs/schemas/%s.json example %d = %d %q, want 202", typ, i, status, msg)
			}
		}
	}
}

// schemaExamples are the examples docs/schemas/<typ>.json documents.
func schemaExamples(t *testing.T, typ string) []json.RawMessage {
	t.Helper()
	b, err := os.ReadFile("../../docs/schemas/" + typ + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Examples []json.RawMessage }
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Examples) == 0 {
		t.Fatalf("docs/schemas/%s.json: %v, %d examples", typ, err, len(doc.Examples))
	}
	return doc.Examples
}

// events.validation: warn (the default). A typo is stored and delivered as it was sent, counted where it was
// published and again where the hub received it, and logged once for its topic and type however often it comes.
func TestPublishWarnDeliversAndCounts(t *testing.T) {
	e := newEdge(t, rig.StartRedisWith(t, rig.RedisOptions{}))
	s := liveStream(t, e, "t")
	bad := `{"workflow":"wf-1","progress":40,"status":"runing"}`
	for i := 0; i < 3; i++ {
		if status, id, _, msg := postPublish(t, e.URL, `{"topic":"t","data":`+bad+`}`, nil); status != http.StatusAccepted || id == "" {
			t.Fatalf("warn: POST /publish %s = %d %q, want 202 with an id", bad, status, msg)
		}
		if f := nextNonProbe(t, s); f.Event != "progress" || f.Data != bad {
			t.Fatalf("warn: /events gave %s %s, want progress %s as published", f.Event, f.Data, bad)
		}
	}
	rig.WaitMetric(t, e.URL, 3, 5*time.Second, "hub_events_invalid_total", "type=progress", "at=receipt")
	if v := invalidCount(t, e, "progress", "publish"); v != 3 {
		t.Errorf("hub_events_invalid_total{type=progress,at=publish} = %v, want 3", v)
	}
	w := warnings(t, e)
	if len(w) != 1 || w[0]["topic"] != "t" || w[0]["at"] != "publish" ||
		w[0]["problem"] != `progress: 40 is not between 0 and 1; status: "runing" is not one of queued, running, succeeded, failed, cancelled` ||
		w[0]["message"] != "event data does not match docs/schemas/progress.json: stored as it is (events.validation: warn)" {
		t.Errorf("logged %v, want one warning for t/progress naming both fields", w)
	}
}

// events.validation: warn answers the publisher with what is wrong: the 202 carries the problems, one per field, and
// data that matches carries none.
func TestPublishWarnAnswersTheProblems(t *testing.T) {
	e := newEdge(t, rig.StartRedisWith(t, rig.RedisOptions{}))
	for _, c := range []struct {
		data string
		want []string
	}{
		{`{"workflow":"wf-1","progress":40}`, []string{"progress: 40 is not between 0 and 1"}},
		{`{"workflow":"wf-1","progress":40,"status":"runing"}`, []string{"progress: 40 is not between 0 and 1",
			`status: "runing" is not one of queued, running, succeeded, failed, cancelled`}},
		{`{"workflow":"wf-1","progress":0.4}`, nil},
	} {
		resp, err := http.Post(e.URL+"/publish", "application/json", strings.NewReader(`{"topic":"t","data":`+c.data+`}`))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		status, body := resp.StatusCode, string(raw)
		var a struct {
			ID       string
			Warnings []string
		}
		if err := json.Unmarshal(raw, &a); err != nil || status != http.StatusAccepted || a.ID == "" ||
			!slices.Equal(a.Warnings, c.want) {
			t.Errorf("warn: POST /publish %s = %d %s, want 202 with an id and warnings %q", c.data, status, body, c.want)
		}
		if c.want == nil && strings.Contains(body, "warnings") {
			t.Errorf("warn: POST /publish %s = %s, want no warnings field", c.data, body)
		}
	}
}

// events.validation: off. Nothing is checked: the typo is stored and delivered, no series moves, nothing is logged.
func TestPublishOffChecksNothing(t *testing.T) {
	e := newEdge(t, rig.StartRedisWith(t, rig.RedisOptions{}), "HUB_EVENTS_VALIDATION=off")
	s := liveStream(t, e, "t")
	bad := `{"workflow":"wf-1","progress":40}`
	if status, _, _, msg := postPublish(t, e.URL, `{"topic":"t","data":`+bad+`}`, nil); status != http.StatusAccepted {
		t.Fatalf("off: POST /publish %s = %d %q, want 202", bad, status, msg)
	}
	if f := nextNonProbe(t, s); f.Data != bad {
		t.Fatalf("off: /events gave %s, want %s", f.Data, bad)
	}
	for _, at := range []string{"publish", "receipt"} {
		if v := invalidCount(t, e, "progress", at); v != 0 {
			t.Errorf("off: hub_events_invalid_total{type=progress,at=%s} = %v, want 0", at, v)
		}
	}
	if w := warnings(t, e); len(w) != 0 {
		t.Errorf("off: logged %v, want nothing", w)
	}
}

// An event that reaches Redis without the hub (the publish script run by an agent, here through the Go Publisher,
// and a plain PUBLISH) cannot be refused: even in strict mode it is delivered, counted on receipt and logged with
// its id.
func TestReceiptCountsWhatBypassedTheHub(t *testing.T) {
	e := newEdge(t, rig.StartRedisWith(t, rig.RedisOptions{}), "HUB_EVENTS_VALIDATION=strict")
	s := liveStream(t, e, "t")
	lock := `{"key":"db","holder":"a","fence":1,"state":"taken","ttl_ms":500}`
	id := e.publish(t, "t", "lock", lock)
	if f := nextNonProbe(t, s); f.Event != "lock" || f.Data != lock || f.ID != id {
		t.Fatalf("strict: /events gave %s %s %s, want lock %s %s", f.ID, f.Event, f.Data, id, lock)
	}
	ephemeral := `{"workflow":"wf-1","status":"runing"}`
	if err := e.RDB.Publish(t.Context(), e.Prefix+":{t}:live", ephemeral).Err(); err != nil {
		t.Fatal(err)
	}
	if f := nextNonProbe(t, s); f.Data != ephemeral || f.HasID {
		t.Fatalf("strict: /events gave %+v, want the ephemeral %s without an id", f, ephemeral)
	}
	rig.WaitMetric(t, e.URL, 1, 5*time.Second, "hub_events_invalid_total", "type=progress", "at=receipt")
	if v := invalidCount(t, e, "lock", "receipt"); v != 1 {
		t.Errorf("hub_events_invalid_total{type=lock,at=receipt} = %v, want 1", v)
	}
	w := warnings(t, e)
	if len(w) != 2 || w[0]["id"] != id || w[0]["at"] != "receipt" || w[0]["problem"] != `state: "taken" is not one of acquired, renewed, released, lost, expired` ||
		w[0]["message"] != "event data does not match docs/schemas/lock.json: delivered as it is" || w[1]["type"] != "progress" {
		t.Errorf("logged %v, want the lock's problem with id %s, then the ephemeral progress's", w, id)
	}
}
