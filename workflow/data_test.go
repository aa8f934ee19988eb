package workflow_test

import (
	"encoding/json"
	"testing"

	"github.com/syncverse/hub/workflow"
)

func TestDecodeExact(t *testing.T) {
	type data struct {
		Status string   `json:"status"`
		ETA    float64  `json:"eta_s,omitempty"`
		Skip   string   `json:"-"`
		Plain  string   // its name is its Go name
		Ptr    *float64 `json:"progress"`
	}
	for _, c := range []struct {
		in   string
		want data
	}{
		{`{"status":"succeeded","Status":"failed"}`, data{Status: "succeeded"}},
		{`{"Status":"failed","status":"succeeded"}`, data{Status: "succeeded"}},
		{`{"STATUS":"failed","ETA_S":9,"eta_s":3}`, data{ETA: 3}},
		{`{"status":"a","status":"b"}`, data{Status: "b"}},
		{`{"-":"x","Skip":"y","Plain":"p","plain":"q"}`, data{Plain: "p"}},
	} {
		var got data
		if err := workflow.DecodeExact([]byte(c.in), &got); err != nil || got != c.want {
			t.Errorf("DecodeExact(%s) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	var d data
	for _, bad := range []string{`[1]`, `"status"`, `{"status":`, `{"status":7}`} {
		if err := workflow.DecodeExact([]byte(bad), &d); err == nil {
			t.Errorf("DecodeExact(%s) = nil, want an error", bad)
		}
	}
	if err := workflow.DecodeExact([]byte(`{}`), d); err == nil {
		t.Error("DecodeExact into a struct value = nil, want an error")
	}
}

// Whatever the input, a status DecodeExact reads is the one an exact-case reader (the publish script, the console)
// reads: the last "status" member.
func FuzzDecodeExact(f *testing.F) {
	for _, s := range []string{`{"status":"succeeded","Status":"failed"}`, `{"sTaTuS":"x"}`, `{"status":"a","status":"b"}`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var d struct {
			Status string `json:"status"`
		}
		if workflow.DecodeExact(in, &d) != nil {
			return
		}
		var m map[string]any
		if err := json.Unmarshal(in, &m); err != nil {
			t.Fatalf("DecodeExact accepted %q, which is not an object: %v", in, err)
		}
		if want, _ := m["status"].(string); d.Status != want {
			t.Fatalf("DecodeExact(%q).status = %q, want %q", in, d.Status, want)
		}
	})
}
