// Package sse owns the wire of GET /events: parsing topics and Last-Event-ID, the response headers, frames,
// heartbeats, write deadlines and the end of a client's permission. It exports an http.Handler and touches no Redis:
// it subscribes to a hub.Hub and writes what the subscription yields. Admission (Config.Admit) and authorization
// (Config.Authorize) are hooks the caller supplies; what a stream holds for its life is released when it ends.
//
// A stream (stream.go) writes through an output that owns the framing: net/http's ResponseWriter (output_http.go), or
// the raw connection of an HTTP/1.1 stream (output_raw.go). One step function does a stream's work whichever loop
// runs it:
//
//   - net/http keeps HTTP/2 and TLS streams, and every stream when Config.NoDetach turns the raw engine off: one
//     goroutine each (the request's), a select over the client leaving, the subscription, the permission's end and
//     the heartbeat timer (stream_http.go).
//   - The raw engine takes HTTP/1.1 over plain TCP from net/http (stream_raw.go): the handler hijacks the connection,
//     writes the head and the replay itself, and returns. While idle such a stream keeps no goroutine; events wake it
//     through the subscription, a few workers write each woken stream's queued events with one non-blocking write
//     (workers.go), one wheel goroutine sends every heartbeat (wheel.go) and notices clients leaving
//     (leave_linux.go), and a stream whose socket stops taking bytes moves to a goroutine of its own until it catches
//     up or its write deadline ends it. The Handler keeps a registry of these streams so that Shutdown
//     (shutdown.go) can wait for them.
//
// Either way events are encoded once (hub.Event.Wire) and every client writes the same bytes.
package sse
