// Package watch is the hub's terminal client, run as `hub watch`, `hub topics` and `hub history`. It follows topics
// over the hub's public HTTP API only (/events, /topics, /topics/{t}/snapshot, /topics/{t}/history), as the console
// does: each topic's snapshot first, then one SSE stream resumed from the snapshot's cursor with Last-Event-ID, a
// snapshot reloaded on `reset`, reconnects with jittered backoff.
//
// It owns the client (Client, Follower), the model of workflows the console shows (Model, with the console's rules:
// one row per topic and workflow id, the hub's health verdict marks stalled, idempotency keys seen twice apply once)
// and the renderers: a table redrawn in place on a terminal (Screen), one line per event (Lines), JSON lines (JSON).
// It knows nothing of Redis or of the hub's insides: what it knows of an event is what the wire says.
//
// Concurrency: a Follower runs on its caller's goroutine and calls its Sink from there only, so the model and the
// renderers need no lock. The one goroutine it starts per stream reads frames off the response body; it ends with
// the stream, and Follow returns only after it has.
package watch
