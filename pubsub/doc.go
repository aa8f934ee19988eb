// Package pubsub owns everything the hub keeps in Redis: key and channel names, the publish script, the Publisher
// that agents use, the Subscriber that feeds the hub (with gap repair), history reads, snapshots and topic listing.
//
// Layout, for a prefix P and a topic T: the stream P:{T}:events holds the history (fields p = previous id, t = type,
// d = data), the channel P:{T}:live carries envelopes {"id","prev","type","data"}, and the hash P:{T}:state the
// latest envelope per workflow and lock; with an idempotency key K of publisher W, the string P:{T}:idem:W:K holds
// the first event's id and a digest of its type and data for history.idempotency_ttl; the hash P:{T}:presence holds
// each hub's watchers of T (Presence). PublishScript (the file publish.lua) writes the stream, state and idempotency
// keys atomically.
//
// A Publisher retries a publish only when it carries an idempotency key (so a retry cannot store it twice), and only
// on a connection error or a failover reply, within its retry budget; the wait is the caller's goroutine's.
//
// It must not import sse or web. Publisher and History are safe for concurrent use; a Subscriber's goroutines are
// owned by Run and gone when it returns.
package pubsub
