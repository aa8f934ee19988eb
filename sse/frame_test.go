package sse

import (
	"bytes"
	"strings"
	"testing"

	"github.com/syncverse/hub/hub"
)

func stored(topic, id, typ, data string) *hub.Event {
	parsed, err := hub.ParseID(id)
	if err != nil {
		panic(err)
	}
	return &hub.Event{Topic: topic, ID: parsed, IDText: id, Type: typ, Data: []byte(data)}
}

func TestEncode(t *testing.T) {
	cases := []struct {
		name string
		ev   *hub.Event
		want string
	}{
		{"stored", stored("t", "1732870000000-0", "progress", `{"step":"compile"}`),
			"id: 1732870000000-0\nevent: progress\ndata: {\"step\":\"compile\"}\n\n"},
		{"ephemeral has no id", &hub.Event{Topic: "t", Type: "progress", Data: []byte(`1`)},
			"event: progress\ndata: 1\n\n"},
		{"empty data", stored("t", "1-0", "x", ""), "id: 1-0\nevent: x\ndata: \n\n"},
		{"LF", stored("t", "1-0", "x", "a\nb"), "id: 1-0\nevent: x\ndata: a\ndata: b\n\n"},
		{"CRLF", stored("t", "1-0", "x", "a\r\nb"), "id: 1-0\nevent: x\ndata: a\ndata: b\n\n"},
		{"CR", stored("t", "1-0", "x", "a\rb"), "id: 1-0\nevent: x\ndata: a\ndata: b\n\n"},
		{"LFCR is two breaks", stored("t", "1-0", "x", "a\n\rb"), "id: 1-0\nevent: x\ndata: a\ndata: \ndata: b\n\n"},
		{"blank line inside", stored("t", "1-0", "x", "a\n\nb"), "id: 1-0\nevent: x\ndata: a\ndata: \ndata: b\n\n"},
		{"trailing LF", stored("t", "1-0", "x", "a\n"), "id: 1-0\nevent: x\ndata: a\ndata: \n\n"},
		{"trailing CR", stored("t", "1-0", "x", "a\r"), "id: 1-0\nevent: x\ndata: a\ndata: \n\n"},
		{"only CRLF", stored("t", "1-0", "x", "\r\n"), "id: 1-0\nevent: x\ndata: \ndata: \n\n"},
		{"field-looking data", stored("t", "1-0", "x", "x\nid: 9-9\nevent: evil\n\ndata: y"),
			"id: 1-0\nevent: x\ndata: x\ndata: id: 9-9\ndata: event: evil\ndata: \ndata: data: y\n\n"},
		{"leading space kept", stored("t", "1-0", "x", " a"), "id: 1-0\nevent: x\ndata:  a\n\n"},
	}
	for _, c := range cases {
		if got := string(Encode(c.ev)); got != c.want {
			t.Errorf("%s: Encode(data %q) = %q, want %q", c.name, c.ev.Data, got, c.want)
		}
		if n := idLineLen(c.ev); !strings.HasPrefix(string(Encode(c.ev))[n:], "event: ") {
			t.Errorf("%s: idLineLen = %d does not cut Encode's id line", c.name, n)
		}
	}
}

// parsedFrame is one frame as an EventSource reads it.
type parsedFrame struct {
	ids, events []string
	data        []string
	traces      []string
}

// parseOneFrame reads b as a browser would and fails the test unless it is exactly one well-formed frame.
func parseOneFrame(t *testing.T, b []byte) parsedFrame {
	t.Helper()
	s := string(b)
	if strings.ContainsRune(s, '\r') {
		t.Fatalf("frame %q contains CR, which a browser reads as a line break", s)
	}
	if !strings.HasSuffix(s, "\n\n") {
		t.Fatalf("frame %q does not end with a blank line", s)
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n\n"), "\n")
	var f parsedFrame
	for _, l := range lines {
		if l == "" {
			t.Fatalf("frame %q has a blank line inside: it would end early", s)
		}
		name, value, _ := strings.Cut(l, ":")
		value = strings.TrimPrefix(value, " ")
		switch name {
		case "id":
			f.ids = append(f.ids, value)
		case "event":
			f.events = append(f.events, value)
		case "data":
			f.data = append(f.data, value)
		case "trace":
			f.traces = append(f.traces, value)
		default:
			t.Fatalf("frame %q has a line %q that is not id, event, trace or data", s, l)
		}
	}
	return f
}

func FuzzEncode(f *testing.F) {
	for _, s := range []string{"", `{"a":1}`, "a\nb", "a\r\nb", "a\rb", "\r\r\n\n", "\n\nid: 1\n\n", "data: x", ":comment\n", "\x00\u2028\u0085"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, data string, isStored bool) {
		ev := &hub.Event{Topic: "t", Type: "progress", Data: []byte(data)}
		if len(data)%2 == 1 {
			ev.TraceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		}
		if isStored {
			ev.ID, ev.IDText = hub.ID{Ms: 1732870000000, Seq: 7}, "1732870000000-7"
		}
		out := Encode(ev)
		fr := parseOneFrame(t, out)
		wantIDs := 0
		if isStored {
			wantIDs = 1
			if fr.ids[0] != ev.IDText {
				t.Fatalf("Encode(%q) id = %q, want %q", data, fr.ids[0], ev.IDText)
			}
		}
		if len(fr.ids) != wantIDs || len(fr.events) != 1 || fr.events[0] != "progress" {
			t.Fatalf("Encode(%q) = %q: %d id and %d event lines, want %d and 1 (progress)", data, out, len(fr.ids), len(fr.events), wantIDs)
		}
		if ev.TraceParent != "" && (len(fr.traces) != 1 || fr.traces[0] != "4bf92f3577b34da6a3ce929d0e0e4736") ||
			ev.TraceParent == "" && len(fr.traces) != 0 {
			t.Fatalf("Encode(%q) trace lines %q for traceparent %q", data, fr.traces, ev.TraceParent)
		}
		want := strings.ReplaceAll(strings.ReplaceAll(data, "\r\n", "\n"), "\r", "\n")
		if got := strings.Join(fr.data, "\n"); got != want {
			t.Fatalf("Encode(%q) data lines rejoin to %q, want %q", data, got, want)
		}
		if c := Encode(ev); !bytes.Equal(c, out) {
			t.Fatalf("Encode is not deterministic: %q then %q", out, c)
		}
	})
}

// An event with a traceparent has a trace line of its trace id after the event line; one without has none, and its
// frame is what it always was.
func TestEncodeTrace(t *testing.T) {
	ev := &hub.Event{Topic: "t", IDText: "1-0", ID: hub.ID{Ms: 1}, Type: "progress", Data: []byte(`{}`),
		TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
	if got, want := string(Encode(ev)), "id: 1-0\nevent: progress\ntrace: 4bf92f3577b34da6a3ce929d0e0e4736\ndata: {}\n\n"; got != want {
		t.Errorf("Encode with a traceparent = %q, want %q", got, want)
	}
	ev = &hub.Event{Topic: "t", IDText: "1-0", ID: hub.ID{Ms: 1}, Type: "progress", Data: []byte(`{}`)}
	if got, want := string(Encode(ev)), "id: 1-0\nevent: progress\ndata: {}\n\n"; got != want {
		t.Errorf("Encode without = %q, want %q", got, want)
	}
}
