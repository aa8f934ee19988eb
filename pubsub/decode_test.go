package pubsub

import (
	"bytes"
	"encoding/json"
	"fmt"
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

// envelopeSeeds are envelopes as the script writes them and near misses of that layout.
var envelopeSeeds = []string{
	`{"id":"5-1","prev":"5-0","type":"x","trace":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","data":1}`,
	`{"id":"5-1","prev":"5-0","type":"x","trace":"00-00000000000000000000000000000000-b7ad6b7169203331-01","data":1}`,
	`{"id":"1733220000000-0","prev":"0-0","type":"progress","data":{"workflow":"wf-1","step":"compile","progress":0.42}}`,
	`{"id":"5-1","prev":"5-0","type":"progress","data":{"a":[1,{"b":"}"}]}}`,
	`{"id":"5-1","prev":"5-0","type":"x","data":"x"}`,
	`{"id":"5-1","prev":"5-0","type":"x","data":null}`,
	`{"id":"5-1","prev":"5-0","type":"x","data":-1.5e3}`,
	`{"id":"5-1","prev":"5-0","type":"x","data":"}"}`,
	`{"id":"5-1","prev":"5-0","type":"x","data":"a\"}"}`,
	`{"id":"5-1","prev":"5-0","type":"x","data":"\u00e9\n"}`,
	`{"id":"5-1","prev":"5-0","type":"x","data":"\xff"}`,
	`{"id":"5-1","prev":"5-0","type":"reset","data":{}}`,
	`{"id":"5-1","prev":"5-0","type":"A","data":{}}`,
	`{"id":"5","prev":"5-0","type":"x","data":{}}`,
	`{"id":"5-1","prev":"99999999999999999999-0","type":"x","data":{}}`,
	`{"id":"5-1","prev":"5-0","type":"x","data":{}}}`,
	`{"id":"5-1","prev":"5-0","type":"x","data":{}`,
	`{"id":"5-1","prev":"5-0","type":"x","data":}`,
	`{"id":"5-1","prev":"5-0","type":"x","data":1,"data":2}`,
	`{"id":"5-1","prev":"5-0","type":"x","data":1,"x":2}`,
	`{"id":"5-1","prev":"5-0","type":"x","data": 1}`,
	`{"id":"5-1","prev":"5-0","type":"x","data":1 }`,
	`{"id":"5-1","prev":"5-0","type":"x","data":1}` + "\n",
	`{"id":"5\u002d1","prev":"5-0","type":"x","data":1}`,
	`{"id":"5-1","prev":"5-0","type":"x\u0041","data":1}`,
	`{"prev":"5-0","id":"5-1","type":"x","data":1}`,
	`{"ID":"5-1","prev":"5-0","type":"x","data":1}`,
	`{"id":"","prev":"5-0","type":"x","data":1}`,
	`{"id":"5-1","prev":"","type":"","data":1}`,
	`{"id":"5-1","prev":"5-0","type":"x","data":[[[[]]]]}`,
	`{"id":"5-1","prev":"5-0","type":"x","data":[1,]}`,
	`{"id":"5-1","prev":"5-0","type":"x","data":12`,
	`{"id":"5-1","prev":"5-0","type":"x","da`,
}

// sameDecode fails unless decodeLive and decodeLiveSlow agree on payload.
func sameDecode(t *testing.T, payload string, max int) {
	t.Helper()
	fast, fastReason := decodeLive("t", []byte(payload), max)
	slow, slowReason := decodeLiveSlow("t", []byte(payload), max)
	if fastReason != slowReason || (fast == nil) != (slow == nil) {
		t.Fatalf("decodeLive(%.300q, max %d) = %v, %q; decodeLiveSlow = %v, %q", payload, max, fast != nil, fastReason, slow != nil, slowReason)
	}
	if fast == nil {
		return
	}
	if fast.Topic != slow.Topic || fast.ID != slow.ID || fast.IDText != slow.IDText || fast.Prev != slow.Prev ||
		fast.Type != slow.Type || fast.TraceParent != slow.TraceParent || !bytes.Equal(fast.Data, slow.Data) || (fast.Data == nil) != (slow.Data == nil) || fast.Source != slow.Source {
		t.Fatalf("decodeLive(%.300q, max %d) = %s; decodeLiveSlow = %s", payload, max, eventFields(fast), eventFields(slow))
	}
}

func eventFields(ev *hub.Event) string {
	return fmt.Sprintf("{Topic:%q ID:%v IDText:%q Prev:%v Type:%q Trace:%q Data:%.300q Source:%v}", ev.Topic, ev.ID, ev.IDText, ev.Prev, ev.Type, ev.TraceParent, ev.Data, ev.Source)
}

// FuzzDecodeLiveFastPath checks decodeLive against decodeLiveSlow on payload, and on the script's layout filled with
// id, prev, typ and data, so the fuzzer also varies the fields inside an envelope the fast path reads.
func FuzzDecodeLiveFastPath(f *testing.F) {
	for _, s := range envelopeSeeds {
		f.Add(s, "5-1", "5-0", "x", "1", uint16(64))
	}
	for _, p := range [][4]string{
		{"1733220000000-0", "0-0", "progress", `{"workflow":"wf-1","progress":0.42}`},
		{"5-1", "5-0", "a.b_c-9", `"}"`}, {"5-1", "5-0", "x", ` 1`}, {"5-1", "5-0", "x", `1,"data":2`},
		{"5-1", "5-0", "x", `{}}`}, {"5\\u002d1", "5-0", "x", `null`}, {"5-1", "5-0", "\xff", `[]`},
		{"5-1", "5-0", "reset", `{}`}, {"", "", "", ""},
		{"5-1", "5-0", `x","trace":"` + testTraceParent, `1`}, {"5-1", "5-0", `x","trace":"00-1`, `1`},
		{"5-1", "5-0", `","trace":"` + testTraceParent, `1`},
	} {
		f.Add("", p[0], p[1], p[2], p[3], uint16(64))
	}
	f.Fuzz(func(t *testing.T, payload, id, prev, typ, data string, maxBytes uint16) {
		max := int(maxBytes%4096) + 1
		sameDecode(t, payload, max)
		sameDecode(t, envID+id+envPrev+prev+envType+typ+envData+data+"}", max)
	})
}

func TestFastEnvelope(t *testing.T) {
	cases := []struct {
		name, payload string
		fast          bool
	}{
		{"script envelope", envelopeSeeds[0], true},
		{"with a trace", `{"id":"5-1","prev":"5-0","type":"x","trace":"` + testTraceParent + `","data":1}`, true},
		{"with a trace of other characters", `{"id":"5-1","prev":"5-0","type":"x","trace":"00-X","data":1}`, false},
		{"trace after data", `{"id":"5-1","prev":"5-0","type":"x","data":1,"trace":"` + testTraceParent + `"}`, false},
		{"} in a data string", `{"id":"5-1","prev":"5-0","type":"x","data":{"a":"}"}}`, true},
		{"escapes in data", `{"id":"5-1","prev":"5-0","type":"x","data":"a\"}\u00e9"}`, true},
		{"string data", `{"id":"5-1","prev":"5-0","type":"x","data":"x"}`, true},
		{"null data", `{"id":"5-1","prev":"5-0","type":"x","data":null}`, true},
		{"number data", `{"id":"5-1","prev":"5-0","type":"x","data":-1.5e3}`, true},
		{"bad id in id characters", `{"id":"5","prev":"--","type":"x","data":1}`, true},
		{"reserved type", `{"id":"5-1","prev":"5-0","type":"reset","data":{}}`, true},
		{"escape in id", `{"id":"5\u002d1","prev":"5-0","type":"x","data":1}`, false},
		{"escape in type", `{"id":"5-1","prev":"5-0","type":"x\u0041","data":1}`, false},
		{"upper case type", `{"id":"5-1","prev":"5-0","type":"A","data":1}`, false},
		{"invalid UTF-8 in type", "{\"id\":\"5-1\",\"prev\":\"5-0\",\"type\":\"x\xff\",\"data\":1}", false},
		{"keys reordered", `{"prev":"5-0","id":"5-1","type":"x","data":1}`, false},
		{"key case", `{"ID":"5-1","prev":"5-0","type":"x","data":1}`, false},
		{"empty id", `{"id":"","prev":"5-0","type":"x","data":1}`, false},
		{"space before data", `{"id":"5-1","prev":"5-0","type":"x","data": 1}`, false},
		{"space after data", `{"id":"5-1","prev":"5-0","type":"x","data":1 }`, false},
		{"leading space", ` {"id":"5-1","prev":"5-0","type":"x","data":1}`, false},
		{"trailing newline", `{"id":"5-1","prev":"5-0","type":"x","data":1}` + "\n", false},
		{"duplicate data", `{"id":"5-1","prev":"5-0","type":"x","data":1,"data":2}`, false},
		{"key after data", `{"id":"5-1","prev":"5-0","type":"x","data":1,"x":2}`, false},
		{"extra }", `{"id":"5-1","prev":"5-0","type":"x","data":{}}}`, false},
		{"truncated", `{"id":"5-1","prev":"5-0","type":"x","data":{}`, false},
		{"no closing brace", `{"id":"5-1","prev":"5-0","type":"x","data":12`, false},
		{"no data", `{"id":"5-1","prev":"5-0","type":"x","data":}`, false},
		{"invalid data", `{"id":"5-1","prev":"5-0","type":"x","data":[1,]}`, false},
		{"ephemeral", `{"workflow":"wf-1"}`, false},
	}
	for _, c := range cases {
		env, ok := fastEnvelope([]byte(c.payload))
		if ok != c.fast {
			t.Errorf("%s: fastEnvelope(%q) ok = %v, want %v", c.name, c.payload, ok, c.fast)
		}
		if ok {
			var want Envelope
			if err := json.Unmarshal([]byte(c.payload), &want); err != nil || env.ID != want.ID || env.Prev != want.Prev ||
				env.Type != want.Type || !bytes.Equal(env.Data, want.Data) {
				t.Errorf("%s: fastEnvelope(%q) = %+v; json.Unmarshal gives %+v, %v", c.name, c.payload, env, want, err)
			}
		}
		sameDecode(t, c.payload, 64)
	}
}

// TestDecodeLiveDeepData: data encoding/json accepts alone can nest one level too deep for it inside the envelope.
func TestDecodeLiveDeepData(t *testing.T) {
	for _, depth := range []int{maxNestingDepth - 1, maxNestingDepth} {
		payload := `{"id":"5-1","prev":"5-0","type":"x","data":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`
		_, fast := fastEnvelope([]byte(payload))
		if fast != (depth < maxNestingDepth) {
			t.Errorf("fastEnvelope(data %d deep) ok = %v, want %v", depth, fast, depth < maxNestingDepth)
		}
		sameDecode(t, payload, 1<<20)
	}
}
