package docs_test

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/app"
	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/lease"
)

// eventSchemas are docs/schemas' JSON Schemas of event data, by event type.
var eventSchemas = []string{"progress", "lock", "health"}

// eventSchema is one compiled schema with the examples it documents.
type eventSchema struct {
	schema   *jsonschema.Schema
	examples []json.RawMessage
}

func loadEventSchemas(t *testing.T) map[string]eventSchema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat() // "since" is a date-time, checked
	out := map[string]eventSchema{}
	for _, name := range eventSchemas {
		file := filepath.Join("docs", "schemas", name+".json")
		b := hubtest.ReadFile(t, file)
		var doc struct {
			Schema   string            `json:"$schema"`
			Examples []json.RawMessage `json:"examples"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if doc.Schema != "https://json-schema.org/draft/2020-12/schema" || len(doc.Examples) == 0 {
			t.Fatalf("%s: $schema %q with %d examples, want draft 2020-12 and examples", file, doc.Schema, len(doc.Examples))
		}
		abs, _ := filepath.Abs(file)
		sch, err := c.Compile(abs)
		if err != nil {
			t.Fatalf("compile %s: %v", file, err)
		}
		out[name] = eventSchema{schema: sch, examples: doc.Examples}
	}
	return out
}

// check validates one event's data against the schema of its type.
func (s eventSchema) check(data []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return s.schema.Validate(v)
}

// The schemas accept every example they document and refuse the mistakes agents make (progress 40 for 0.4, a
// misspelt status, a missing workflow, a lock state or a verdict that does not exist, a date that is not one).
// The hub's own set, embedded in the binary, says the same of each.
func TestEventSchemasAndTheirExamples(t *testing.T) {
	schemas := loadEventSchemas(t)
	embedded, err := app.CompileEventSchemas()
	if err != nil {
		t.Fatalf("app.CompileEventSchemas() = %v", err)
	}
	for _, name := range eventSchemas {
		for i, ex := range schemas[name].examples {
			if err := schemas[name].check(ex); err != nil {
				t.Errorf("%s example %d %s: %v", name, i, ex, err)
			}
			if err := embedded.Validate(name, ex); err != nil {
				t.Errorf("the embedded %s schema refuses example %d %s: %v", name, i, ex, err)
			}
		}
	}
	for _, c := range []struct{ typ, data string }{
		{"progress", `{"workflow":"wf-1","progress":40}`},
		{"progress", `{"workflow":"wf-1","progress":-0.1}`},
		{"progress", `{"workflow":"wf-1","status":"runing"}`},
		{"progress", `{"workflow":"wf-1","eta_s":"soon"}`},
		{"progress", `{"step":"compile","progress":0.4}`},
		{"progress", `{"workflow":""}`},
		{"progress", `["wf-1"]`},
		{"lock", `{"key":"db","holder":"a","fence":1,"state":"taken","ttl_ms":500}`},
		{"lock", `{"key":"db","holder":"a","fence":"7","state":"acquired","ttl_ms":500}`},
		{"lock", `{"key":"db","holder":"a","fence":1.5,"state":"acquired","ttl_ms":500}`},
		{"lock", `{"key":"db","holder":"a","fence":1,"state":"acquired"}`},
		{"health", `{"workflow":"wf-1","verdict":"sick","since":"2026-11-29T10:15:00Z"}`},
		{"health", `{"workflow":"wf-1","verdict":"stalled","since":"yesterday"}`},
		{"health", `{"workflow":"wf-1","verdict":"stalled"}`},
		{"health", `{"workflow":"wf-1","verdict":"stalled","since":"2026-11-29T10:15:00Z","extra":1}`},
	} {
		if err := schemas[c.typ].check([]byte(c.data)); err == nil {
			t.Errorf("%s schema accepts %s, want it refused", c.typ, c.data)
		}
		if err := embedded.Validate(c.typ, []byte(c.data)); err == nil {
			t.Errorf("the embedded %s schema accepts %s, want it refused", c.typ, c.data)
		}
	}
}

// What the lease library announces (every state, with and without a workflow) is what lock.json says a lock
// event is, so a strict hub never refuses a lease's events and the hub never counts them invalid.
func TestEventSchemaLockMatchesTheLease(t *testing.T) {
	set, err := app.CompileEventSchemas()
	if err != nil {
		t.Fatal(err)
	}
	if lease.EventType != "lock" {
		t.Fatalf("lease.EventType = %q, want lock (docs/schemas/lock.json)", lease.EventType)
	}
	states := leaseStates(t)
	if len(states) < 5 {
		t.Fatalf("lease declares the states %v, fewer than the five it has: the reader is broken", states)
	}
	for _, state := range states {
		for _, wf := range []string{"", "wf-1"} {
			data, _ := json.Marshal(lease.Event{Key: "db", Holder: "agent-a", Fence: 3, State: state, TTLms: 5000, Workflow: wf})
			if err := set.Validate(lease.EventType, data); err != nil {
				t.Errorf("the lease's lock event %s: %v", data, err)
			}
		}
	}
}

// leaseStates are the string constants named State* that package lease declares: every state it may announce.
func leaseStates(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("lease/*.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			v, ok := n.(*ast.ValueSpec)
			for i := 0; ok && i < len(v.Names) && i < len(v.Values); i++ {
				if lit, isLit := v.Values[i].(*ast.BasicLit); isLit && lit.Kind == token.STRING && strings.HasPrefix(v.Names[i].Name, "State") {
					state, _ := strconv.Unquote(lit.Value)
					out = append(out, state)
				}
			}
			return !ok
		})
	}
	return out
}

// Every documented progress and lock example goes through a strict hub (POST /publish, events.validation: strict)
// and comes out of /events as it went in, valid; the hub's own health events (a stall, its recovery, a lock key held
// twice) match health.json, and the hub found nothing invalid on publish or on receipt.
func TestEventSchemaExamplesThroughTheHub(t *testing.T) {
	schemas := loadEventSchemas(t)
	h := hubtest.Start(t, rig.StartRedisWith(t, rig.RedisOptions{}), "HUB_WORKFLOWS_STALL_AFTER=1s", "HUB_WORKFLOWS_SWEEP=100ms",
		"HUB_EVENTS_VALIDATION=strict")
	defer func() {
		for _, m := range rig.Scrape(t, h.URL)["hub_events_invalid_total"].GetMetric() {
			if m.GetCounter().GetValue() != 0 {
				t.Errorf("hub_events_invalid_total%v = %v after the examples and the hub's verdicts, want 0", m.GetLabel(), m.GetCounter().GetValue())
			}
		}
	}()
	healthSeen := map[string]bool{}
	checkHealth := func(f rig.Frame) {
		t.Helper()
		if err := schemas["health"].check([]byte(f.Data)); err != nil {
			t.Errorf("the hub's health event %s does not match docs/schemas/health.json: %v", f.Data, err)
		}
		var v struct{ Workflow, Verdict string }
		_ = json.Unmarshal([]byte(f.Data), &v)
		healthSeen[v.Workflow+" "+v.Verdict] = true
	}

	for _, typ := range []string{"progress", "lock"} {
		topic := "schemas." + typ
		stream := rig.OpenStream(t, h.URL, rig.TopicQuery(topic), "0-0")
		for i, ex := range schemas[typ].examples {
			body, _ := json.Marshal(map[string]any{"topic": topic, "type": typ, "data": ex})
			resp, err := http.Post(h.URL+"/publish", "application/json", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusAccepted {
				t.Fatalf("POST /publish %s example %d = %d, want 202", typ, i, resp.StatusCode)
			}
		}
		for i := 0; i < len(schemas[typ].examples); {
			f := stream.NextEvent(10 * time.Second)
			if f.Event == "health" { // the running example workflows may stall meanwhile
				checkHealth(f)
				continue
			}
			if f.Event != typ || !jsonEqual(f.Data, string(schemas[typ].examples[i])) {
				t.Fatalf("/events on %s: event %d = %s %s, want %s %s", topic, i, f.Event, f.Data, typ, schemas[typ].examples[i])
			}
			if err := schemas[typ].check([]byte(f.Data)); err != nil {
				t.Errorf("%s event %s from /events: %v", typ, f.Data, err)
			}
			i++
		}
		stream.Close()
	}

	// The hub's verdicts: wf-stall goes silent past stall_after and speaks again; wf-a and wf-b hold one key.
	const topic = "schemas.health"
	stream := rig.OpenStream(t, h.URL, rig.TopicQuery(topic), "0-0")
	h.Publish(topic, "progress", `{"workflow":"wf-stall","status":"running","progress":0.1}`)
	for _, wf := range []string{"wf-a", "wf-b"} {
		h.Publish(topic, "progress", `{"workflow":"`+wf+`","status":"running","progress":0.5}`)
	}
	h.Publish(topic, "lock", `{"key":"k","holder":"agent-a","fence":1,"state":"acquired","ttl_ms":30000,"workflow":"wf-a"}`)
	h.Publish(topic, "lock", `{"key":"k","holder":"agent-b","fence":2,"state":"acquired","ttl_ms":30000,"workflow":"wf-b"}`)
	deadline := time.Now().Add(20 * time.Second)
	spoke := false
	for !healthSeen["wf-stall recovered"] || !healthSeen["wf-b duplicate"] {
		if time.Now().After(deadline) {
			t.Fatalf("after 20s the hub's verdicts were %v; want wf-stall stalled then recovered, wf-b duplicate", healthSeen)
		}
		f := stream.NextEvent(time.Until(deadline))
		if f.Event != "health" {
			continue
		}
		checkHealth(f)
		if healthSeen["wf-stall stalled"] && !spoke {
			h.Publish(topic, "progress", `{"workflow":"wf-stall","status":"running","progress":0.2}`)
			spoke = true
		}
	}
}

func jsonEqual(a, b string) bool {
	var x, y any
	return json.Unmarshal([]byte(a), &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y)
}
