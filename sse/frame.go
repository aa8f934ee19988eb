package sse

import (
	"bytes"

	"github.com/syncverse/hub/hub"
)

// Encode returns an event's frame: id (when stored), event and data lines, and the blank line that ends it. Data is
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
	return appendData(b, ev.Data)
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
