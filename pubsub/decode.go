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
	if tp, ok := m.Values["tp"].(string); ok {
		ev.TraceParent = validTraceParent(tp)
	}
	if r := checkData(ev.Data, max); r != "" {
		return ev, r
	}
	return ev, ""
}

// Envelope is an event as the publish script PUBLISHes it on the live channel, and as GET
// /topics/{topic}/history shows it: one type for both, so the two cannot drift apart.
type Envelope struct {
	ID   string `json:"id"`
	Prev string `json:"prev"`
	Type string `json:"type"`
	// Trace is the publisher's W3C traceparent, when the event was published with one.
	Trace string          `json:"trace,omitempty"`
	Data  json.RawMessage `json:"data"`
}

// decodeLive parses a live message: an envelope, or any other JSON (an ephemeral event). It returns the event and
// an empty reason, or a drop reason; for an envelope whose id and prev parse, ev is set even when it is dropped, so
// the caller can still advance past it. An envelope exactly as the script writes it is read by fastEnvelope;
// anything else by decodeLiveSlow, with the same result.
func decodeLive(topic string, payload []byte, max int) (ev *hub.Event, reason string) {
	if len(payload) > max+256 {
		return nil, dropTooLarge
	}
	if env, ok := fastEnvelope(payload); ok {
		// env.Data aliases payload, which the caller converts from the go-redis string: a copy no one else holds.
		return envelopeEvent(topic, env, max)
	}
	return decodeLiveSlow(topic, payload, max)
}

// decodeLiveSlow is decodeLive through encoding/json alone: the reference fastEnvelope is fuzzed against.
func decodeLiveSlow(topic string, payload []byte, max int) (ev *hub.Event, reason string) {
	if len(payload) > max+256 {
		return nil, dropTooLarge
	}
	var env Envelope
	if bytes.HasPrefix(bytes.TrimSpace(payload), []byte("{")) && json.Unmarshal(payload, &env) == nil && env.ID != "" && env.Data != nil {
		return envelopeEvent(topic, env, max)
	}
	if r := checkData(payload, max); r != "" {
		return nil, r
	}
	return &hub.Event{Topic: topic, Type: hub.DefaultType, Data: payload, Source: hub.SourceEphemeral}, ""
}

// envelopeEvent turns a decoded envelope into an event, or says why it must be dropped.
func envelopeEvent(topic string, env Envelope, max int) (*hub.Event, string) {
	id, err1 := hub.ParseID(env.ID)
	prev, err2 := hub.ParseID(env.Prev)
	if err1 != nil || err2 != nil {
		return nil, dropBadEnvelope
	}
	ev := &hub.Event{Topic: topic, ID: id, IDText: env.ID, Prev: prev, Type: env.Type, Data: env.Data, Source: hub.SourceLive}
	if env.Trace != "" {
		ev.TraceParent = validTraceParent(env.Trace)
	}
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

// The envelope as publish.lua concatenates it: {"id":"<id>","prev":"<id>","type":"<type>","data":<data>}, with
// "trace":"<traceparent>", before data, when the event has one.
const (
	envID    = `{"id":"`
	envPrev  = `","prev":"`
	envType  = `","type":"`
	envData  = `","data":`
	envTrace = `","trace":"`
)

// validTraceParent returns tp when it is a valid traceparent, else "": a stored or published one that is not (it
// did not come from the script) is not followed.
func validTraceParent(tp string) string {
	if _, err := ParseTraceParent(tp); err != nil {
		return ""
	}
	return tp
}

// idBytes and typeBytes are the characters of a stream id and of an event type: nothing json.Unmarshal would
// unescape or replace, so a string made of them decodes to its own bytes.
var idBytes, typeBytes, traceBytes = byteSet("0123456789-"), byteSet("abcdefghijklmnopqrstuvwxyz0123456789._-"),
	byteSet("0123456789abcdef-")

func byteSet(chars string) (set [256]bool) {
	for i := 0; i < len(chars); i++ {
		set[chars[i]] = true
	}
	return set
}

// fastEnvelope reads an envelope laid out byte for byte as the script writes it, without encoding/json's
// reflection, and returns what json.Unmarshal would. ok is false for any other layout (escapes, whitespace, other
// key order or case, more keys, other characters in id, prev or type); decodeLiveSlow reads those.
func fastEnvelope(payload []byte) (env Envelope, ok bool) {
	n := len(payload)
	if n == 0 || payload[n-1] != '}' || !hasAt(payload, 0, envID) {
		return env, false
	}
	idEnd, ok1 := field(payload, len(envID), &idBytes, envPrev)
	prevEnd, ok2 := field(payload, idEnd+len(envPrev), &idBytes, envType)
	typeEnd, ok3 := field(payload, prevEnd+len(envType), &typeBytes, envData)
	traceStart, traceEnd := typeEnd, typeEnd
	if !ok3 && ok1 && ok2 && typeEnd > prevEnd+len(envType) && hasAt(payload, typeEnd, envTrace) {
		traceStart = typeEnd + len(envTrace)
		traceEnd, ok3 = field(payload, traceStart, &traceBytes, envData)
	}
	if !ok1 || !ok2 || !ok3 {
		return env, false
	}
	start := traceEnd + len(envData)
	data := payload[start : n-1 : n-1] // all up to the final }, which must close the envelope: one JSON value
	if len(data) == 0 || isSpace(data[0]) || isSpace(data[len(data)-1]) || !json.Valid(data) {
		return env, false
	}
	// Valid data nested maxNestingDepth deep is one level too deep inside the envelope for encoding/json; nesting
	// that deep takes twice as many bytes.
	if len(data) >= 2*maxNestingDepth && !json.Valid(payload) {
		return env, false
	}
	head := string(payload[:start]) // one allocation for id, prev and type
	return Envelope{
		ID:    head[len(envID):idEnd],
		Prev:  head[idEnd+len(envPrev) : prevEnd],
		Type:  head[prevEnd+len(envType) : typeEnd],
		Trace: head[traceStart:traceEnd],
		Data:  data,
	}, true
}

// maxNestingDepth is how deeply encoding/json's scanner nests arrays and objects.
const maxNestingDepth = 10000

// field returns the end of the non-empty run of allowed bytes at i, and whether sep follows it.
func field(p []byte, i int, allowed *[256]bool, sep string) (end int, ok bool) {
	end = i
	for end < len(p) && allowed[p[end]] {
		end++
	}
	return end, end > i && hasAt(p, end, sep)
}

func hasAt(p []byte, i int, s string) bool { return len(p)-i >= len(s) && string(p[i:i+len(s)]) == s }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func describeDrop(reason string) string {
	switch reason {
	case dropTooLarge:
		return "event larger than limits.max_event_bytes"
	case dropInvalidJSON:
		return "data is not valid JSON"
	case dropBadType:
		return "invalid event type"
	case dropReserved:
		return "stored event of a type only the hub sends (reset, auth-expired, presence)"
	case dropBadEnvelope:
		return "envelope with a malformed id or prev"
	default:
		return fmt.Sprintf("malformed stream entry (%s)", reason)
	}
}
