// Package workflow makes the hub the authority on its workflows' health. A Sweeper reads what every topic's state
// says of its workflows (the latest progress event per workflow and the latest lock event per workflow and key: no
// other event type is judged, and field names are read with their exact case) and
// decides the verdicts:
//
//   - stalled: the latest event says running or queued, and nothing came for the longer of the topic's stall_after
//     and the workflow's own eta_s;
//   - recovered: a stalled workflow sent a progress event again, a final one too;
//   - duplicate: two running workflows each hold, per their latest lock event, the same lock key; or a lock event
//     for a key came with a fence lower than one already seen;
//   - and it notices workflows that end, so that a failure reaches the on-call.
//
// Each verdict is committed through the Source with one atomic step that records it beside the workflow's state, so
// that however many replicas sweep, each occurrence is published once, and a restarted hub neither repeats a verdict
// nor forgets a stall that began while it was down: everything it decides from lives in Redis, not in the process.
//
// The package knows nothing of Redis, HTTP or YAML: package pubsub implements Source, package notify implements
// Notifier. A Sweeper owns one goroutine, started by Run and gone when Run returns.
package workflow
