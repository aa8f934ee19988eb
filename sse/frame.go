package sse

import (
	"bytes"

	"github.com/syncverse/hub/hub"
)

// Encode returns an event's frame: id (when stored), event, trace (the 32 hex digits of the publisher's trace id, only
// when the event carries a traceparent: EventSource ignores the field, line readers such as hub watch show it) and
// data lines, and the blank line that ends it. Data is
// split at every CR, LF or CRLF into several data lines, so no input can add a field or end the frame early; id and
// event come from validated values that contain neither. It is computed once per event (hub.Event.Wire).
func Encode(ev *hub.Event) []byte {
	b := make([]byte, 0, len(ev.Data)+len(ev.Type)+len(ev.IDText)+24)
	if ev.Stored() {
		b = append(b, "id: "...)
		b = append(b, ev.IDText...)
		b = append(b, '\n')
	}
	b = append(b, "event: "...)
	b = append(b, ev.Type...)
	b = append(b, '\n')
	if ev.TraceParent != "" {
		b = appendTrace(b, ev.TraceParent)
	}
	return appendData(b, ev.Data)
}

// appendTrace writes the trace line of a traceparent (validated when the event was read: 55 bytes of hex and dashes,
// so nothing in it can end the line).
func appendTrace(b []byte, traceparent string) []byte {
	if len(traceparent) < 35 {
		return b
	}
	b = append(b, "trace: "...)
	b = append(b, traceparent[3:35]...)
	return append(b, '\n')
}

func appendData(b, data []byte) []byte {
	for {
		i := lineEnd(data)
		b = append(b, "data: "...)
		if i < 0 {
			b = append(b, data...)
			return append(b, '\n', '\n')
		}
		b = append(b, data[:i]...)
		b = append(b, '\n')
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
}

// lineEnd returns the index of the first CR or LF in data, or -1. Two vectorised IndexByte scans beat one IndexAny
// several times over; data is usually one line of JSON, so both run to its end.
func lineEnd(data []byte) int {
	i := bytes.IndexByte(data, '\n')
	head := data
	if i >= 0 {
		head = data[:i]
	}
	if j := bytes.IndexByte(head, '\r'); j >= 0 {
		return j
	}
	return i
}

// idLineLen is the length of the id line that Encode put at the start of ev's frame.
func idLineLen(ev *hub.Event) int {
	if !ev.Stored() {
		return 0
	}
	return len("id: \n") + len(ev.IDText)
}

var heartbeat = []byte(":heartbeat\n\n")
