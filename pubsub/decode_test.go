package pubsub

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/syncverse/hub/hub"
)

func TestDecodeLive(t *testing.T) {
	cases := []struct {
		name, payload string
		reason        string
		stored        bool
		hasEvent      bool
	}{
		{"envelope", `{"id":"5-1","prev":"5-0","type":"progress","data":{"a":1}}`, "", true, true},
		{"envelope with null data", `{"id":"5-1","prev":"5-0","type":"progress","data":null}`, "", true, true},
		{"envelope after spaces", ` {"id":"5-1","prev":"0-0","type":"x","data":1}`, "", true, true},
		{"bad id", `{"id":"5","prev":"5-0","type":"progress","data":{}}`, dropBadEnvelope, false, false},
		{"bad prev", `{"id":"5-1","prev":"","type":"progress","data":{}}`, dropBadEnvelope, false, false},
		{"bad type", `{"id":"5-1","prev":"5-0","type":"A B","data":{}}`, dropBadType, true, true},
		{"no type", `{"id":"5-1","prev":"5-0","data":{}}`, dropBadType, true, true},
		{"data too large", `{"id":"5-1","prev":"5-0","type":"x","data":"` + strings.Repeat("x", 40) + `"}`, dropTooLarge, true, true},
		{"payload far too large", `"` + strings.Repeat("x", 400) + `"`, dropTooLarge, false, false},
		{"ephemeral object", `{"workflow":"wf-1"}`, "", false, true},
		{"ephemeral without data", `{"id":"5-1","type":"x"}`, "", false, true},
		{"ephemeral number", `42`, "", false, true},
		{"ephemeral too large", `"` + strings.Repeat("x", 40) + `"`, dropTooLarge, false, false},
		{"not JSON", `{"workflow":`, dropInvalidJSON, false, false},
		{"empty", ``, dropInvalidJSON, false, false},
	}
	for _, c := range cases {
		ev, reason := decodeLive("t", []byte(c.payload), 32)
		if reason != c.reason || (ev != nil) != c.hasEvent || ev != nil && ev.Stored() != c.stored {
			t.Errorf("%s: decodeLive(%q) = %+v, %q; want reason %q, event %v, stored %v", c.name, c.payload, ev, reason, c.reason, c.hasEvent, c.stored)
		}
		if ev != nil && reason == "" && !ev.Stored() && (ev.Source != hub.SourceEphemeral || ev.Type != hub.DefaultType || string(ev.Data) != c.payload) {
			t.Errorf("%s: ephemeral event %+v, want source ephemeral, type progress, the payload as data", c.name, ev)
		}
	}
	for _, r := range []string{dropTooLarge, dropInvalidJSON, dropBadType, dropBadEnvelope, dropBadEntry} {
		if describeDrop(r) == "" {
			t.Errorf("describeDrop(%q) is empty", r)
		}
	}
}

func FuzzDecodeLive(f *testing.F) {
	for _, s := range []string{
		`{"id":"5-1","prev":"5-0","type":"progress","data":{"a":1}}`,
		`{"id":"5-1","prev":"5-0","type":"progress","data":null}`,
		`{"id":"5-1","prev":"5-0","type":"Progress","data":1}`,
		`{"ID":"5-1","Prev":"5-0","TYPE":"x","Data":[1]}`,
		`{"id":"5-1","prev":"5-0","type":"x","data":1,"data":2}`,
		`{"workflow":"wf-1"}`, `42`, `"x"`, ``, `{`, ` {"id":"1-0"}`, "\xff",
	} {
		f.Add(s, uint16(64))
	}
	f.Fuzz(func(t *testing.T, payload string, maxBytes uint16) {
		max := int(maxBytes%4096) + 1
		ev, reason := decodeLive("t", []byte(payload), max)
		if reason != "" {
			if ev != nil && !ev.Stored() {
				t.Fatalf("decodeLive(%q) dropped (%s) an event without an id but returned it", payload, reason)
			}
			return
		}
		if ev == nil {
			t.Fatalf("decodeLive(%q) = nil, \"\"; want an event or a reason", payload)
		}
		if ev.Topic != "t" {
			t.Fatalf("decodeLive(%q).Topic = %q", payload, ev.Topic)
		}
		if err := hub.ValidateType(ev.Type); err != nil {
			t.Fatalf("decodeLive(%q) accepted type %q: %v", payload, ev.Type, err)
		}
		if !json.Valid(ev.Data) || len(ev.Data) > max {
			t.Fatalf("decodeLive(%q, max %d) accepted data %q (%d bytes, valid JSON %v)", payload, max, ev.Data, len(ev.Data), json.Valid(ev.Data))
		}
		if ev.Stored() {
			id, err := hub.ParseID(ev.IDText)
			if err != nil || id != ev.ID || ev.Source != hub.SourceLive {
				t.Fatalf("decodeLive(%q): stored event id %q parses to %v, %v; has %v, source %s", payload, ev.IDText, id, err, ev.ID, ev.Source)
			}
		} else if ev.Source != hub.SourceEphemeral || string(ev.Data) != payload {
			t.Fatalf("decodeLive(%q): ephemeral event %+v, want the payload as data", payload, ev)
		}
	})
}
