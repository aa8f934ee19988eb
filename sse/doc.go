// Package sse owns the wire of GET /events: parsing topics and Last-Event-ID, the response headers, frames,
// heartbeats and write deadlines. It exports an http.Handler and touches no Redis: it subscribes to a hub.Hub and
// writes what the subscription yields.
//
// An HTTP/1.1 stream over plain TCP leaves net/http: the handler hijacks the connection, writes the head and the
// replay itself, and returns (detach.go). While idle such a stream keeps no goroutine; events wake it through the
// subscription, a few workers write each woken stream's queued events with one non-blocking write, one wheel
// goroutine sends every heartbeat and notices clients leaving, and a stream whose socket stops taking bytes moves to
// a goroutine of its own until it catches up or its write deadline ends it. The Handler keeps a registry of these
// streams so Shutdown can wait for them. HTTP/2 and TLS streams stay with net/http, one goroutine each (the
// request's): a select over the client leaving, the subscription ending, the heartbeat timer and queued events.
// Either way events are encoded once (hub.Event.Wire) and every client writes the same bytes.
package sse
