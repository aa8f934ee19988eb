// Package eventschema checks the data of the event types the hub knows (progress, lock, health) against their JSON
// Schemas, the files of docs/schemas, and applies events.validation (off, warn or strict) to what fails.
//
// It owns the schema set compiled once at start (Compile, from a file system main embeds, so the binary carries the
// very files the docs show), the problem in words that names the field ("progress: 40 is not between 0 and 1"), the
// hub_events_invalid_total series, and the rate-limited warning of each (topic, type) that sends bad data. It
// checks at two places: a publisher of this hub asks before it stores an event (Checker.Publish: POST /publish), and
// Checker.Receiving wraps the hub's broadcaster so every event the subscriber feeds it is checked on receipt,
// whoever published it (the Lua script called directly, another replica, an agent of another language). On receipt
// an event is never dropped, whatever the mode: it is stored already, and its own topic's readers are better served
// by a counted, logged event than by a gap.
//
// It must not import echo, go-redis, pubsub, sse or web. A Set and a Checker are safe for concurrent use; the
// broadcaster Receiving returns adds no goroutine and calls the one it wraps from its caller's.
package eventschema
