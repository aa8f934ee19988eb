package pubsub

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/hub"
)

// Drop reasons: why an event that reached the hub some way other than a Publisher is refused. They label
// hub_events_dropped_total.
const (
	dropBadEnvelope = "bad_envelope"
	dropBadType     = "bad_type"
	dropInvalidJSON = "invalid_json"
	dropTooLarge    = "too_large"
	dropBadEntry    = "bad_entry"
	dropReserved    = "reserved_type" // a stored reset or auth-expired: only the hub sends those, and never with an id
)

// dropReasons lists every drop reason, so each series exists from the start.
var dropReasons = []string{dropBadEnvelope, dropBadType, dropInvalidJSON, dropTooLarge, dropBadEntry, dropReserved}

// checkData applies the publisher's rules to data that arrived another way.
func checkData(data []byte, max int) string {
	if len(data) > max {
		return dropTooLarge
	}
	if checkJSON(data) != nil {
		return dropInvalidJSON
	}
	return ""
}

// fromEntry turns a stream entry into an event, or says why it must be dropped. prev is "" when the entry has none.
func fromEntry(topic string, m redis.XMessage, max int, src hub.Source) (*hub.Event, string) {
	id, err := hub.ParseID(m.ID)
	if err != nil {
		return nil, dropBadEntry
	}
	ev := &hub.Event{Topic: topic, ID: id, IDText: m.ID, Source: src}
	p, _ := m.Values["p"].(string)
	if ev.Prev, err = hub.ParseID(p); err != nil {
		return ev, dropBadEntry
	}
	ev.Type, _ = m.Values["t"].(string)
	if hub.ValidateType(ev.Type) != nil {
		return ev, dropBadType
	}
	if controlType(ev.Type) {
		return ev, dropReserved
	}
	d, _ := m.Values["d"].(string)
	ev.Data = []byte(d)
	if r := checkData(ev.Data, max); r != "" {
		return ev, r
	}
	return ev, ""
}

// Envelope is an event as the publish script PUBLISHes it on the live channel, and as GET
// /topics/{topic}/history shows it: one type for both, so the two cannot drift apart.
type Envelope struct {
	ID   string          `json:"id"`
	Prev string          `json:"prev"`
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// decodeLive parses a live message: an envelope, or any other JSON (an ephemeral event). It returns the event and
// an empty reason, or a drop reason; for an envelope whose id and prev parse, ev is set even when it is dropped, so
// the caller can still advance past it.
func decodeLive(topic string, payload []byte, max int) (ev *hub.Event, reason string) {
	if len(payload) > max+256 {
		return nil, dropTooLarge
	}
	var env Envelope
	if bytes.HasPrefix(bytes.TrimSpace(payload), []byte("{")) && json.Unmarshal(payload, &env) == nil && env.ID != "" && env.Data != nil {
		id, err1 := hub.ParseID(env.ID)
		prev, err2 := hub.ParseID(env.Prev)
		if err1 != nil || err2 != nil {
			return nil, dropBadEnvelope
		}
		ev = &hub.Event{Topic: topic, ID: id, IDText: env.ID, Prev: prev, Type: env.Type, Data: env.Data, Source: hub.SourceLive}
		if hub.ValidateType(env.Type) != nil {
			return ev, dropBadType
		}
		if controlType(env.Type) {
			return ev, dropReserved
		}
		if len(env.Data) > max {
			return ev, dropTooLarge
		}
		return ev, ""
	}
	if r := checkData(payload, max); r != "" {
		return nil, r
	}
	return &hub.Event{Topic: topic, Type: hub.DefaultType, Data: payload, Source: hub.SourceEphemeral}, ""
}

func describeDrop(reason string) string {
	switch reason {
	case dropTooLarge:
		return "event larger than limits.max_event_bytes"
	case dropInvalidJSON:
		return "data is not valid JSON"
	case dropBadType:
		return "invalid event type"
	case dropReserved:
		return "stored event of a type only the hub sends (reset, auth-expired)"
	case dropBadEnvelope:
		return "envelope with a malformed id or prev"
	default:
		return fmt.Sprintf("malformed stream entry (%s)", reason)
	}
}
