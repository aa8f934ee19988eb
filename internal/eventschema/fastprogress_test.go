package eventschema

import (
	"encoding/json"
	"maps"
	"os"
	"slices"
	"testing"
)

// fastSeeds are progress data the fast path must judge as the library does: valid ones it should take itself.
var fastSeeds = []string{
	`{"workflow":"wf-1"}`, ` { "workflow" : "wf-1" , "progress" : 0.4 , "status" : "running" } `,
	`{"workflow":"wf-1","progress":1,"eta_s":0,"message":"a \"quoted\" line\n","agent":"py","title":"t","step":"s"}`,
	`{"workflow":"wf","attempt":2,"nested":{"a":[1,-2.5e3,true,false,null,{"b":"\u00e9"}]},"p":1,"s":2,"t":1765000000000000000}`,
	`{"p":1,"s":2,"t":3,"x":"xxxx"}`, `{"workflow":""}`, `{"workflow":"wf","progress":1.0000000000000001}`,
	`{"workflow":"wf","progress":-0}`, `{"workflow":"wf","progress":-0.0000001}`, `{"workflow":"wf","progress":1e0}`,
	`{"workflow":"wf","status":"runing"}`, `{"workflow":"wf","status":"run\u006eing"}`, `{"work\u0066low":"wf"}`,
	`{"workflow":"wf","workflow":""}`, `{"workflow":"","workflow":"wf"}`, `{"workflow":"wf"} x`, `{"workflow":"wf",}`,
	`{"workflow":"wf","eta_s":01}`, `{"workflow":"wf","x":[1,]}`, `{"workflow":"wf","x":"\x01"}`, `[]`, `"wf"`,
	`{"workflow":"wf","eta_s":123456789012345}`, `{"workflow":"wf","eta_s":1234567890123456}`, `{"workflow":5}`,
	`{"workflow":"wf","title":null}`, `{"workflow":"wf","x":tru}`, `{"workflow":"\ud800"}`,
}

// FuzzProgressFastPathAgrees: whatever the data, the fast path never calls valid what the library refuses.
func FuzzProgressFastPathAgrees(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add(s)
	}
	set := docsSchemas(f)
	f.Fuzz(func(t *testing.T, data string) {
		if progressValid([]byte(data)) {
			if err := set.validate("progress", []byte(data)); err != nil {
				t.Fatalf("fast path: %q valid; the library: %v", data, err)
			}
		}
	})
}

// TestProgressFastPathTakesValidData: the schema's own examples and the seeds the library accepts without an
// exponent, an escaped name or a long number are taken by the fast path (it is not a path nothing takes).
func TestProgressFastPathTakesValidData(t *testing.T) {
	set := docsSchemas(t)
	var doc struct {
		Examples []json.RawMessage `json:"examples"`
	}
	raw, err := os.ReadFile("../../docs/schemas/progress.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc.Examples) == 0 {
		t.Fatalf("progress.json examples: %v (%d)", err, len(doc.Examples))
	}
	for _, ex := range doc.Examples {
		if !progressValid(ex) {
			t.Errorf("fast path refuses the schema's example %s", ex)
		}
	}
	for _, s := range fastSeeds {
		fast, lib := progressValid([]byte(s)), set.validate("progress", []byte(s)) == nil
		if fast && !lib {
			t.Errorf("%s: fast path valid, library refuses", s)
		}
		t.Logf("%-60s fast %v library %v", s, fast, lib)
	}
	for _, s := range []string{`{"workflow":"wf-1"}`, `{"workflow":"wf","progress":-0}`, `{"p":1,"workflow":"w","x":{"a":[1,"b"]}}`} {
		if !progressValid([]byte(s)) {
			t.Errorf("fast path refuses %s", s)
		}
	}
}

// TestProgressFastPathKnowsTheSchemasFields: the fields, bounds and enum the fast path checks are progress.json's;
// a change to the schema fails here until the fast path follows it.
func TestProgressFastPathKnowsTheSchemasFields(t *testing.T) {
	raw, err := os.ReadFile("../../docs/schemas/progress.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Type       string   `json:"type"`
		Required   []string `json:"required"`
		Additional *bool    `json:"additionalProperties"`
		Properties map[string]struct {
			Type      string   `json:"type"`
			MinLength *int     `json:"minLength"`
			Minimum   *float64 `json:"minimum"`
			Maximum   *float64 `json:"maximum"`
			Enum      []string `json:"enum"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"workflow": "string min 1", "title": "string", "step": "string", "message": "string",
		"agent": "string", "progress": "number 0..1", "eta_s": "number 0..", "status": "enum"}
	got := map[string]string{}
	for name, p := range doc.Properties {
		g := p.Type
		switch {
		case p.MinLength != nil:
			g += " min " + jsonText(*p.MinLength)
		case p.Minimum != nil && p.Maximum != nil:
			g += " " + jsonText(*p.Minimum) + ".." + jsonText(*p.Maximum)
		case p.Minimum != nil:
			g += " " + jsonText(*p.Minimum) + ".."
		case p.Enum != nil:
			g = "enum"
			if !slices.Equal(slices.Sorted(slices.Values(p.Enum)), slices.Sorted(maps.Keys(progressStatus))) {
				t.Errorf("status enum %v, the fast path knows %v", p.Enum, slices.Sorted(maps.Keys(progressStatus)))
			}
		}
		got[name] = g
	}
	if !maps.Equal(got, want) || doc.Type != "object" || !slices.Equal(doc.Required, []string{"workflow"}) || doc.Additional != nil {
		t.Errorf("progress.json: type %q, required %v, additionalProperties %v, properties %v;\nthe fast path checks "+
			"an object, required [workflow], other fields allowed, %v", doc.Type, doc.Required, doc.Additional, got, want)
	}
}

// BenchmarkValidateProgress: a valid progress event through Validate (the fast path) and through the library.
func BenchmarkValidateProgress(b *testing.B) {
	set := docsSchemas(b)
	data := []byte(`{"workflow":"wf-7f3a","title":"schema migration","step":"test","progress":0.8,"status":"running","message":"suite 3 of 4","agent":"python","eta_s":42}`)
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if set.Validate("progress", data) != nil {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if set.validate("progress", data) != nil {
				b.Fatal("invalid")
			}
		}
	})
}
