package notify

import (
	"encoding/json"
	"strings"
	"testing"
)

// Data past the limit is cut to valid JSON within it, keeping what people read; data within it is left as it is.
func TestTruncateDataKeepsReadableMembers(t *testing.T) {
	data := json.RawMessage(`{"blob":"` + strings.Repeat("b", 5000) + `","title":"nightly","message":"` +
		strings.Repeat("é", 2000) + `","progress":0.5,"nested":{"deep":"` + strings.Repeat("x", 600) + `"}}`)
	got, cut := truncateData(data, 1024)
	var m map[string]any
	if !cut || len(got) > 1024 || json.Unmarshal(got, &m) != nil {
		t.Fatalf("truncateData(%d bytes, 1024) = %d bytes, cut %v: %.200s; want valid JSON within 1024", len(data), len(got), cut, got)
	}
	msg, _ := m["message"].(string)
	if m["title"] != "nightly" || m["progress"] != 0.5 || !strings.HasSuffix(msg, "…") || m["nested"] != nil {
		t.Errorf("truncateData kept %v; want title, progress, a shortened message, and no nested object", m)
	}
	if got, cut := truncateData(json.RawMessage(`[`+strings.Repeat(`1,`, 1000)+`1]`), 256); cut != true || string(got) != "null" {
		t.Errorf("truncateData(long array) = %s, %v; want null, true", got, cut)
	}
	small := json.RawMessage(`{"status":"failed"}`)
	if got, cut := truncateData(small, 256); cut || string(got) != string(small) {
		t.Errorf("truncateData(small) = %s, %v; want it unchanged", got, cut)
	}
}

func FuzzTruncateData(f *testing.F) {
	f.Add(`{"message":"`+strings.Repeat("m", 900)+`","a":1}`, uint16(256))
	f.Add(`{"title":"\u00e9\u00e9","x":[1,2,3]}`, uint16(300))
	f.Add(`"just a string"`, uint16(256))
	f.Fuzz(func(t *testing.T, data string, limit uint16) {
		lim := 256 + int(limit)%4096
		got, cut := truncateData(json.RawMessage(data), lim)
		if cut != (len(data) > lim) {
			t.Fatalf("cut = %v for %d bytes at limit %d", cut, len(data), lim)
		}
		if !cut {
			return
		}
		if len(got) > lim || !json.Valid(got) {
			t.Fatalf("truncateData(%q, %d) = %q (%d bytes): want valid JSON within the limit", data, lim, got, len(got))
		}
	})
}
