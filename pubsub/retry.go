package pubsub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/internal/delay"
)

// failoverReplies are the Redis error replies that mean "not here, not now": a slot moved or is moving, the cluster
// or the master is down, the server is loading its data, or it has just become a replica.
var failoverReplies = []string{"MOVED ", "ASK ", "TRYAGAIN", "CLUSTERDOWN", "LOADING", "READONLY", "MASTERDOWN"}

// retryable reports whether a failed publish may succeed if sent again: a connection that failed or a failover
// reply. A refusal of the event, a script error or the caller's own deadline is final.
func retryable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, redis.ErrClosed) {
		return false
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		for _, p := range failoverReplies {
			if redis.HasErrorPrefix(err, p) {
				return true
			}
		}
		return false
	}
	var nerr net.Error
	return errors.As(err, &nerr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, redis.ErrPoolTimeout)
}

// ErrSlotMigrating wraps a publish that was still refused with TRYAGAIN or ASK when its migration budget ran out:
// the topic's slot was being moved between Cluster nodes for longer than redis.migration_retry.
var ErrSlotMigrating = errors.New("the topic's Redis Cluster slot is being migrated")

// migrating reports whether err is a reply that says the key's slot is moving between nodes, or has just moved:
// TRYAGAIN and ASK while it moves, MOVED once it has (a publish that waited out a migration meets MOVED next, and
// must keep the migration's budget).
func migrating(err error) bool {
	return redis.HasErrorPrefix(err, "TRYAGAIN") || redis.HasErrorPrefix(err, "ASK ") || redis.HasErrorPrefix(err, "MOVED ")
}

// budget is how long a publish that last failed with err may be retried from its first attempt.
func (p *Publisher) budget(err error) time.Duration {
	if migrating(err) && p.cfg.RetryBudget >= 0 {
		return max(p.cfg.RetryBudget, p.cfg.MigrationRetry)
	}
	return p.cfg.RetryBudget
}

// retriedFor is the error of a publish whose budget ran out after retrying for d.
func retriedFor(err error, d time.Duration) error {
	d = d.Round(time.Millisecond)
	if migrating(err) {
		return fmt.Errorf("%w: %w (retried for %v; redis.migration_retry bounds it)", ErrSlotMigrating, err, d)
	}
	return fmt.Errorf("%w (retried for %v)", err, d)
}

// refreshSlots makes a cluster client read the slot map again after a connection error or a MOVED that reached us
// (after a migration its redirects can run out): go-redis reloads it by
// itself only after a MOVED or every 10 s, and until then sends a dead master's slots to the dead master (a SIGKILLed
// master took 11 s of retries to leave without this).
func refreshSlots(rdb redis.UniversalClient, err error) {
	var rerr redis.Error
	if cc, ok := rdb.(*redis.ClusterClient); ok && (!errors.As(err, &rerr) || redis.HasErrorPrefix(err, "MOVED ")) {
		cc.ReloadState(context.Background())
	}
}

// backoff is the wait before retry n+1: 25 ms doubling to at most 800 ms, jittered down by up to half, so the
// publishers that a failover interrupted together do not come back together.
func backoff(n int) time.Duration {
	d := 25 * time.Millisecond << min(n, 5)
	return delay.Jitter(d/2, d)
}
