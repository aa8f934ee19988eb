package eventschema

import (
	"errors"
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

// docsSchemas compiles the repository's docs/schemas, the files main embeds.
func docsSchemas(t testing.TB) *Set {
	t.Helper()
	s, err := Compile(os.DirFS("../../docs/schemas"))
	if err != nil {
		t.Fatalf("Compile(docs/schemas) = %v", err)
	}
	return s
}

// What an agent gets wrong is told field by field, in the words of docs/schemas: the range of progress, the
// statuses there are, a missing or unknown field, a wrong type, a date that is not one.
func TestValidateNamesTheFieldAndTheProblem(t *testing.T) {
	s := docsSchemas(t)
	for _, c := range []struct{ typ, data, want string }{
		{"progress", `{"workflow":"wf-1","progress":40}`, "progress: 40 is not between 0 and 1"},
		{"", `{"workflow":"wf-1","progress":-0.1}`, "progress: -0.1 is not between 0 and 1"},
		{"progress", `{"workflow":"wf-1","status":"runing"}`, `status: "runing" is not one of queued, running, succeeded, failed, cancelled`},
		{"progress", `{"workflow":"wf-1","eta_s":"soon"}`, `eta_s: "soon" is a string, not a number`},
		{"progress", `{"workflow":"wf-1","eta_s":-3}`, "eta_s: -3 is less than 0"},
		{"progress", `{"step":"compile","progress":0.4}`, "workflow: missing (required)"},
		{"progress", `{"workflow":""}`, "workflow: empty (at least 1 character)"},
		{"progress", `["wf-1"]`, `data: ["wf-1"] is an array, not an object`},
		{"lock", `{"key":"db","holder":"a","fence":1,"state":"taken","ttl_ms":500}`, `state: "taken" is not one of acquired, renewed, released, lost, expired`},
		{"lock", `{"key":"db","holder":"a","fence":1.5,"state":"acquired","ttl_ms":500}`, "fence: 1.5 is a number, not an integer"},
		{"lock", `{"key":"db","holder":"a","fence":1,"state":"acquired"}`, "ttl_ms: missing (required)"},
		{"health", `{"workflow":"wf-1","verdict":"stalled","since":"yesterday"}`, `since: "yesterday" is not a date-time (RFC 3339, e.g. 2026-11-29T10:15:00Z)`},
		{"health", `{"workflow":"wf-1","verdict":"stalled","since":"2026-11-29T10:15:00Z","extra":1}`, "extra: unknown field (not allowed here)"},
	} {
		err := s.Validate(c.typ, []byte(c.data))
		var bad *Invalid
		if !errors.As(err, &bad) {
			t.Errorf("Validate(%q, %s) = %v, want an *Invalid", c.typ, c.data, err)
			continue
		}
		if bad.Detail() != c.want {
			t.Errorf("Validate(%q, %s) says %q, want %q", c.typ, c.data, bad.Detail(), c.want)
		}
		typ := c.typ
		if typ == "" {
			typ = "progress"
		}
		if want := typ + " data does not match docs/schemas/" + typ + ".json: " + c.want; err.Error() != want {
			t.Errorf("Validate(%q, %s).Error() = %q, want %q", c.typ, c.data, err, want)
		}
	}
}

// Two problems at once are both told; data that fits, a type without a schema and data that is not JSON (the
// publisher's to refuse) pass.
func TestValidateEveryProblemAndWhatPasses(t *testing.T) {
	s := docsSchemas(t)
	var bad *Invalid
	want := `progress: 40 is not between 0 and 1; status: "runing" is not one of queued, running, succeeded, failed, cancelled`
	for i := 0; i < 20; i++ { // the validator visits properties in map order; the problems come by field
		if !errors.As(s.Validate("progress", []byte(`{"workflow":"wf-1","status":"runing","progress":40}`)), &bad) || bad.Detail() != want {
			t.Fatalf("Validate of two mistakes = %v, want both named in field order: %s", bad, want)
		}
	}
	for _, c := range []struct{ typ, data string }{
		{"progress", `{"workflow":"wf-1","progress":0.4,"status":"running","attempt":2}`},
		{"build-log", `{"progress":40}`},
		{"progress", `{not json`},
	} {
		if err := s.Validate(c.typ, []byte(c.data)); err != nil {
			t.Errorf("Validate(%q, %s) = %v, want nil", c.typ, c.data, err)
		}
	}
	if !s.Knows("") || !s.Knows("lock") || !s.Knows("health") || s.Knows("build-log") {
		t.Errorf("Knows: progress (as \"\") %v, lock %v, health %v, build-log %v; want the three schemas' types only",
			s.Knows(""), s.Knows("lock"), s.Knows("health"), s.Knows("build-log"))
	}
}

// Compile refuses a set with a file missing or a schema that is not one, naming the file.
func TestCompileRefusesABrokenSet(t *testing.T) {
	good, err := os.ReadFile("../../docs/schemas/lock.json")
	if err != nil {
		t.Fatal(err)
	}
	for name, fsys := range map[string]fstest.MapFS{
		"health.json": {"progress.json": {Data: good}, "lock.json": {Data: good}},
		"lock.json":   {"progress.json": {Data: good}, "lock.json": {Data: []byte(`{"type": 7}`)}, "health.json": {Data: good}},
	} {
		if _, err := Compile(fsys); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("Compile without a good %s = %v, want an error naming it", name, err)
		}
	}
}
