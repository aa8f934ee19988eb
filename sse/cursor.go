package sse

import (
	"errors"
	"fmt"
	"strings"

	"github.com/syncverse/hub/hub"
)

// ErrBadCursor wraps every malformed Last-Event-ID.
var ErrBadCursor = errors.New("invalid Last-Event-ID")

// Earliest is the cursor (or one position of one, "topic=earliest") that starts at the oldest event a topic still
// holds, Mercure's keyword: the whole retained history is replayed, without a reset for what was trimmed before it.
const Earliest = "earliest"

// ParseCursor reads a resume position for topics. For one topic it is a stream id ("1732870000000-0") or the
// one-position cursor "topic=id"; for several it is "a=id;b=id". Earliest, alone or as the id of a position, starts
// a topic at its oldest event (alone, every topic). A topic the cursor does not name starts fresh; a
// position for a topic not asked for is ignored, since a console may drop a topic and keep its cursor. Anything
// else is an error, never a silent start from scratch.
func ParseCursor(topics []string, raw string) ([]hub.From, error) {
	from := make([]hub.From, len(topics))
	if raw == "" {
		return from, nil
	}
	if raw == Earliest {
		for i := range from {
			from[i] = hub.From{Set: true, Earliest: true}
		}
		return from, nil
	}
	if !strings.Contains(raw, "=") {
		if len(topics) != 1 {
			return nil, fmt.Errorf("%w: with several topics it must be topic=id;topic=id", ErrBadCursor)
		}
		id, err := hub.ParseID(raw)
		if err != nil {
			return nil, fmt.Errorf("%w: %q is %v", ErrBadCursor, clip(raw), err)
		}
		from[0] = hub.From{After: id, Set: true}
		return from, nil
	}
	for part := range strings.SplitSeq(raw, ";") {
		topic, idText, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("%w: %q is not topic=id", ErrBadCursor, clip(part))
		}
		if err := hub.ValidateTopic(topic); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadCursor, err)
		}
		f := hub.From{Set: true, Earliest: idText == Earliest}
		if !f.Earliest {
			id, err := hub.ParseID(idText)
			if err != nil {
				return nil, fmt.Errorf("%w: position of %s: %q is %v", ErrBadCursor, topic, clip(idText), err)
			}
			f.After = id
		}
		for i, t := range topics {
			if t == topic {
				if from[i].Set {
					return nil, fmt.Errorf("%w: topic %s appears twice", ErrBadCursor, topic)
				}
				from[i] = f
			}
		}
	}
	return from, nil
}

func clip(s string) string {
	if len(s) > 48 {
		return s[:48] + "…"
	}
	return s
}

// appendStartFrame appends the id-only frame a stream asked with start_id=1 writes once its replay is done: its position,
// a stream id for one topic and a cursor "a=id;b=id" for several (a topic with an empty stream at 0-0), which the
// client's EventSource keeps as its last event id. A reconnect with it resumes exactly there.
func appendStartFrame(b []byte, sub *hub.Subscription) []byte {
	b = append(b, "id: "...)
	topics := sub.Topics()
	for i, t := range topics {
		id, _ := sub.Position(i)
		if len(topics) > 1 {
			if i > 0 {
				b = append(b, ';')
			}
			b = append(b, t...)
			b = append(b, '=')
		}
		b = id.Append(b)
	}
	return append(b, "\n\n"...)
}

// appendCursor writes the cursor of a multi-topic subscription as it stands after ev: first ev's own topic and id,
// then every other topic that has a position. A console reads the first position to tell an event's topic.
func appendCursor(b []byte, sub *hub.Subscription, ev *hub.Event) []byte {
	b = append(b, ev.Topic...)
	b = append(b, '=')
	b = append(b, ev.IDText...)
	for i, t := range sub.Topics() {
		if t == ev.Topic {
			continue
		}
		if id, ok := sub.Position(i); ok {
			b = append(b, ';')
			b = append(b, t...)
			b = append(b, '=')
			b = id.Append(b)
		}
	}
	return b
}
