package eventschema

import (
	"errors"
	"strings"
	"testing"
)

// Whatever data an agent sends, Validate does not panic, and a refusal names at least one field with a problem on
// one line each: what the log line and the 400 carry stays readable.
func FuzzValidate(f *testing.F) {
	for _, seed := range []string{
		`{"workflow":"wf-1","progress":40}`, `{"workflow":"wf-1","status":"runing"}`, `["wf-1"]`, `null`, `"x"`,
		`{"workflow":{"a":[1,2,{"b":"\n"}]},"progress":"40","eta_s":-1e308}`, `{"key":"db","fence":1.5,"state":"taken"}`,
		`{"workflow":"wf","verdict":"stalled","since":"2026-13-40T99:00:00Z","extra\n":1}`,
	} {
		for _, typ := range Types {
			f.Add(typ, seed)
		}
	}
	s := docsSchemas(f)
	f.Fuzz(func(t *testing.T, typ, data string) {
		err := s.Validate(typ, []byte(data))
		if err == nil {
			return
		}
		var bad *Invalid
		if !errors.As(err, &bad) {
			t.Fatalf("Validate(%q, %q) = %v, want nil or an *Invalid", typ, data, err)
		}
		if len(bad.Problems) == 0 {
			t.Fatalf("Validate(%q, %q): an *Invalid without a problem", typ, data)
		}
		for _, p := range bad.Problems {
			if p.Field == "" || p.Text == "" || strings.ContainsAny(p.String(), "\r\n") {
				t.Errorf("Validate(%q, %q): problem %q, want a field and a text, on one line", typ, data, p)
			}
		}
	})
}
