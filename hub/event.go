package hub

import (
	"strconv"
	"sync"
)

// Source says how an event reached the hub; it labels the received-events metric.
type Source string

const (
	SourceLive      Source = "live"      // a live envelope from Redis pub/sub
	SourceRepair    Source = "repair"    // read back from the stream to fill a gap
	SourceReplay    Source = "replay"    // read from the stream for one reconnecting client
	SourceEphemeral Source = "ephemeral" // a plain PUBLISH without envelope: no id, never replayed
)

// Event is one publication. The hub shares one *Event between all subscribers, so it must not change once broadcast.
type Event struct {
	Topic string
	// ID is the stream id; IDText its text exactly as Redis wrote it. Both are empty for ephemeral events and resets.
	ID     ID
	IDText string
	// Prev is the id of the stream entry before this one (0-0 for the first); it lets a reader notice a gap.
	Prev ID
	Type string
	// Data is one JSON value, validated before the event reaches the hub.
	Data []byte
	// Source is how the event reached the hub.
	Source Source
	// TraceParent is the W3C traceparent its publisher stored with it, or "": the hub's spans join that trace.
	TraceParent string

	wireOnce sync.Once
	wire     []byte
}

// Stored reports whether the event has a stream id (it can be replayed and resumed from).
func (e *Event) Stored() bool { return e.IDText != "" }

// Wire returns the event's bytes on the wire, computing them with encode the first time only. Every subscriber of
// the event gets the same slice, so a publication is encoded once however many clients receive it.
func (e *Event) Wire(encode func(*Event) []byte) []byte {
	e.wireOnce.Do(func() { e.wire = encode(e) })
	return e.wire
}

// Reset reasons, sent to a client whose position cannot be continued without a gap.
const (
	ResetTruncated   = "history-truncated" // the position is older than the oldest stored event
	ResetLost        = "history-lost"      // the stream does not continue the position: Redis lost data
	ResetReplayLimit = "replay-limit"      // more events were missed than one request may replay
)

// GapReason says why a stream whose first entry after position names prev as its predecessor does not continue
// position (prev != position): entries after position were trimmed (prev is newer), or position itself is gone
// from a stream that holds entries around it, or the stream began again (prev is older, or zero): Redis lost data.
func GapReason(position, prev ID) string {
	if position.Less(prev) {
		return ResetTruncated
	}
	return ResetLost
}

// NewReset builds the event that tells a client it missed events it cannot get back, so it must reload the
// snapshot. oldest is the first event it will receive next (zero if none).
func NewReset(topic, reason string, oldest ID) *Event {
	b := make([]byte, 0, 96+len(topic))
	b = append(b, `{"topic":"`...)
	b = append(b, topic...) // a valid topic needs no JSON escaping
	b = append(b, `","reason":"`...)
	b = append(b, reason...)
	b = append(b, `","oldest":`...)
	if oldest.IsZero() {
		b = append(b, `null}`...)
	} else {
		b = strconv.AppendQuote(b, oldest.String())
		b = append(b, '}')
	}
	return &Event{Topic: topic, Type: "reset", Data: b}
}
