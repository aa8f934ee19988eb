package server

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzPublishBody: any body either parses into a topic, type and one valid JSON data value, or is refused with a
// message that says what a body must be; it never panics and never lets trailing bytes through.
func FuzzPublishBody(f *testing.F) {
	for _, s := range []string{
		`{"topic":"t","type":"progress","data":{"workflow":"w"}}`,
		`{"topic":"t","data":1}`,
		`{"topic":"t","data":null}`,
		`{"topic":"t"}`,
		`{"topic":"t","data":1}{"topic":"t","data":2}`,
		`{"topic":"t","data":1} x`,
		`{"topic":"t","data":{"a":` + "\n" + `[1,2]}}`,
		`[]`, ``, `{"topic":"t","data":1,"x":2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := parsePublishBody(body)
		if err != nil {
			if msg := err.Error(); !strings.Contains(msg, "body must be one JSON object") && msg != "missing data" {
				t.Fatalf("parsePublishBody(%q) error %q does not say what a body must be", body, msg)
			}
			return
		}
		if !json.Valid(in.Data) {
			t.Fatalf("parsePublishBody(%q) accepted data %q, which is not valid JSON", body, in.Data)
		}
		if !json.Valid(body) {
			t.Fatalf("parsePublishBody(%q) accepted a body that is not one JSON value", body)
		}
	})
}

func TestParsePublishBody(t *testing.T) {
	cases := []struct {
		body, errHas string
	}{
		{`{"topic":"t","type":"x","data":{"a":1}}`, ""},
		{`{"topic":"t","data":null}`, ""},
		{`{"topic":"t"}`, "missing data"},
		{`{"topic":"t","data":1} x`, "body must be one JSON object"},
		{`{"topic":"t","data":1}{"topic":"t","data":2}`, "trailing data"},
		{`{"topic":"t","data":1,"extra":2}`, "unknown field"},
		{`{"topic":"t","data":}`, "body must be one JSON object"},
	}
	for _, c := range cases {
		_, err := parsePublishBody([]byte(c.body))
		if c.errHas == "" && err != nil || c.errHas != "" && (err == nil || !strings.Contains(err.Error(), c.errHas)) {
			t.Errorf("parsePublishBody(%s) = %v, want error containing %q", c.body, err, c.errHas)
		}
	}
}
