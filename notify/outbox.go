package notify

import (
	"context"
	"time"

	"github.com/syncverse/hub/workflow"
)

// Delivery is one notification for one webhook.
type Delivery struct {
	ID           string                `json:"id"` // X-Hub-Delivery: the same on every try
	Webhook      string                `json:"webhook"`
	Notification workflow.Notification `json:"notification"`
	Attempt      int                   `json:"attempt"` // tries made so far
	First        time.Time             `json:"first"`   // when it was queued
}

// Added counts what Outbox.Add did with the deliveries it was given.
type Added struct {
	Queued, Coalesced, Dropped int
}

// Claimed is a delivery this replica has taken from the outbox; Ref names it there.
type Claimed struct {
	Ref string
	Delivery
}

// Outbox is the durable queue of deliveries the replicas share. Its methods are safe for concurrent use.
type Outbox interface {
	// Add queues each delivery unless one with its ID was queued before. A delivery for the same webhook, kind and
	// topic as one still waiting to be claimed is folded into that one (Claim returns it with Coalesced and
	// Workflows); one that would take the outbox and retry set past limit deliveries is dropped.
	Add(ctx context.Context, ds []Delivery, limit int) (Added, error)
	// Claim takes up to n deliveries for consumer: first those another consumer took more than idle ago and never
	// finished, then new ones, waiting up to block for one.
	Claim(ctx context.Context, consumer string, n int, idle, block time.Duration) ([]Claimed, error)
	// Done finishes a delivered one.
	Done(ctx context.Context, c Claimed) error
	// Later finishes this try and queues c.Delivery again at at; when the retry set holds limit deliveries already,
	// it dead-letters c instead and reports false.
	Later(ctx context.Context, c Claimed, at time.Time, limit int) (bool, error)
	// Dead finishes c for good, keeping it with reason among the dead letters.
	Dead(ctx context.Context, c Claimed, reason string) error
	// Due moves the deliveries whose time came by now back into the queue.
	Due(ctx context.Context, now time.Time) error
	// Pending counts the deliveries not yet delivered or dead.
	Pending(ctx context.Context) (int64, error)
}
