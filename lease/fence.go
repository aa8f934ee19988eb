package lease

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Guard protects one resource with fencing tokens: it remembers the highest fence that has touched the resource and
// refuses any operation that carries a lower one.
//
// A lock alone cannot give this promise. A holder can be paused (a GC pause, SIGSTOP, a slow disk, a VM migration)
// after its last check that it still holds the lease and before its write; meanwhile the lease expires, another holder
// acquires and writes, and then the first one wakes and writes too, without knowing. No check made by the paused
// holder can close that window, because the pause can fall right after the check. Only the resource, at the moment of
// the write, can tell the two apart: the newer holder's fence is higher, so the older write is refused.
//
// The check and the write must be one atomic step at the resource, which is why a Guard runs them in one Lua script
// (FencedScript). Admit alone only records the fence; it protects a resource outside Redis only if that resource
// itself checks the fence again when it applies the write.
type Guard struct {
	locker  *Locker
	key     string
	metrics *Metrics
}

// Guard returns a Guard whose highest-seen fence lives at key, using the Locker's client and metrics. In Redis
// Cluster, give key the same hash tag as the keys the fenced scripts touch.
func (l *Locker) Guard(key string) *Guard {
	return &Guard{locker: l, key: key, metrics: l.opts.Metrics}
}

// FencedScript is a Lua script that runs only when its fence is admitted. Its body sees its own keys from KEYS[2] and
// its arguments from ARGV[2]; KEYS[1] and ARGV[1] are the guard key and the fence.
type FencedScript struct {
	script *redis.Script
}

// NewFencedScript wraps body, which must end with a return, so that it runs after the fence check in one script.
func NewFencedScript(body string) *FencedScript {
	return &FencedScript{script: redis.NewScript(fencePrelude + body)}
}

var admitScript = NewFencedScript("return 1")

// Admit records fence as the highest seen, or returns ErrStaleFence when a higher one was seen already.
func (g *Guard) Admit(ctx context.Context, fence int64) error {
	_, err := g.Run(ctx, fence, admitScript, nil)
	return err
}

// Run runs s with fence, and returns its reply, ErrStaleFence (wrapped) when a higher fence has already touched the
// resource, or the script's own error. With Options.MinReplicas, a write that too few replicas acknowledged returns
// its reply and ErrUnreplicated: it ran, but a failover may forget it (and the highest fence seen with it).
func (g *Guard) Run(ctx context.Context, fence int64, s *FencedScript, keys []string, args ...any) (any, error) {
	allKeys := append([]string{g.key}, keys...)
	allArgs := append([]any{fence}, args...)
	cmd, acked, err := g.locker.replicated(ctx, s.script, allKeys, allArgs...)
	var res any
	if err == nil {
		res, err = cmd.Result()
	}
	if err != nil {
		if seen, ok := strings.CutPrefix(err.Error(), "STALEFENCE "); ok {
			g.metrics.fence.WithLabelValues(outcomeStale).Inc()
			return nil, fmt.Errorf("fence %d on %q, highest seen %s: %w", fence, g.key, seen, ErrStaleFence)
		}
		if err != redis.Nil {
			g.metrics.fence.WithLabelValues(outcomeError).Inc()
			return nil, fmt.Errorf("fenced script on %q: %w", g.key, err)
		}
	}
	g.metrics.fence.WithLabelValues(outcomeAdmitted).Inc()
	if (err == nil || err == redis.Nil) && !g.locker.enough(acked) {
		return res, fmt.Errorf("fenced script on %q: %d of %d replicas: %w", g.key, acked, g.locker.opts.MinReplicas, ErrUnreplicated)
	}
	return res, err
}
