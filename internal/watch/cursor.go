package watch

import (
	"net/url"
	"strings"

	"github.com/syncverse/hub/hub"
)

// cmpID orders two stream ids; one that does not parse sorts first, so it never hides a real one.
func cmpID(a, b string) int {
	x, errA := hub.ParseID(a)
	y, errB := hub.ParseID(b)
	switch {
	case errA != nil || errB != nil:
		return boolInt(errA == nil) - boolInt(errB == nil)
	case x.Less(y):
		return -1
	case y.Less(x):
		return 1
	}
	return 0
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// position is how far one topic has been followed.
type position struct {
	// last is the id of the last event passed on; an event at or below it is a repeat and is dropped. Empty after a
	// reset in the line modes: what follows a reset is the hub's continuation, whatever its ids.
	last string
	// resume is what the next connection asks to continue after: last, or the snapshot's cursor before any event.
	resume string
}

// cursorFor builds the Last-Event-ID for topics from their positions: the bare id for one topic, "a=ID;b=ID" for
// several. Topics without a position are left out, so the hub starts them fresh.
func cursorFor(topics []string, pos map[string]*position) string {
	if len(topics) == 1 {
		return pos[topics[0]].resume
	}
	var b strings.Builder
	for _, t := range topics {
		p := pos[t].resume
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(';')
		}
		b.WriteString(t)
		b.WriteByte('=')
		b.WriteString(p)
	}
	return b.String()
}

// eventTopic splits an event's SSE id into its topic and stream id: the id itself on a one-topic connection, else the
// cursor's first position, which the hub makes the event's own.
func eventTopic(raw string, topics []string) (topic, id string, ok bool) {
	if !strings.Contains(raw, "=") {
		if len(topics) != 1 {
			return "", "", false
		}
		return topics[0], raw, true
	}
	first, _, _ := strings.Cut(raw, ";")
	t, id, _ := strings.Cut(first, "=")
	// Topic names and ids need no escaping, but a hub that escapes anyway must not break the client.
	if u, err := url.PathUnescape(t); err == nil {
		t = u
	}
	if u, err := url.PathUnescape(id); err == nil {
		id = u
	}
	for _, want := range topics {
		if want == t {
			return t, id, true
		}
	}
	return "", "", false
}
