// Package web owns the operations console: the HTML, CSS and JavaScript modules embedded in the binary and the
// http.Handler that serves them at /.
//
// The console is an ordinary client of the hub's public HTTP API (/topics, /topics/{topic}/snapshot, /events): it
// paints from a snapshot, then follows /events from the snapshot's cursor, through the hub's JavaScript client
// (clients/js), which this package serves under /client/ from that package's embedded files. Beyond those files it
// imports nothing of the hub; it must not learn about Redis, SSE internals or the other packages, so the console can
// only rely on what the hub promises to every client: the frames, resume and reset of docs/events.md and
// docs/subscribing.md, and exactly once, in order, per topic (docs/guarantees.md).
//
// The assets are read once at start-up and never change, so Handler is safe for concurrent use and keeps no other
// state.
package web
