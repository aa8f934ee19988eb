// Package hub is the in-process heart of the progress hub: topics, subscriptions, one bounded queue per client, the
// slow-client policy, and the hand-off from replayed history to live delivery.
//
// It knows nothing of HTTP, SSE bytes, Redis or configuration files. What it needs from the event store it asks
// through Store, which it declares itself (package pubsub implements it).
//
// Concurrency: Broadcast never blocks. It reads a topic's subscriber list without a lock (copy-on-write) and makes one
// non-blocking push per subscription, into a queue whose ring grows on demand up to the client buffer, so an idle
// client holds none. A full queue evicts that subscription (ReasonSlow), whose client reconnects and replays from the
// store. A queue that a repair burst fills is not evicted: its consumer sees Lagged and reads the rest from the store
// with CatchUp. Queues outlive their subscription, so no push can race with an end: Done tells the consumer to stop.
// Each Subscription is consumed by one goroutine at a time, in the order that Subscription's documentation gives;
// Close, Done and Reason may be called from anywhere. Hub.Close ends every subscription and returns; it owns no goroutine.
package hub
