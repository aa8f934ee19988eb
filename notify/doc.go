// Package notify tells the on-call: it turns the hub's workflow notifications into webhook deliveries, at least once
// and never lost. Each notification is queued durably, once per webhook, in an outbox the hub's replicas share
// (package pubsub keeps it in Redis); each queued delivery is sent by one replica, retried with capped, jittered
// exponential backoff for at least notify.retry_for (24 h), then dead-lettered and counted. A delivery claimed by a
// replica that stopped is taken over by another. A receiver that answers 4xx (other than 408 and 429) has refused
// the delivery, and it is not retried.
//
// Requests carry Content-Type: application/json, X-Hub-Delivery (the same on every retry) and, with a secret,
// X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>. They time out, and follow no redirect to another host.
//
// A Dispatcher owns the goroutine of Run, gone when Run returns.
package notify
