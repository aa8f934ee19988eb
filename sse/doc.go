// Package sse owns the wire of GET /events: parsing topics and Last-Event-ID, the response headers, frames,
// heartbeats and write deadlines. It exports an http.Handler, keeps no registry and touches no Redis: it subscribes
// to a hub.Hub and writes what the subscription yields.
//
// Each stream is one goroutine (the request's): a select over the client leaving, the subscription ending, the
// heartbeat timer and queued events. Events are encoded once (hub.Event.Wire) and every client writes the same
// bytes; what is queued is written with one write and one flush, under a per-write deadline.
package sse
