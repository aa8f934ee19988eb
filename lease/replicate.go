package lease

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrUnreplicated is returned when a write of the lease (an acquisition, a renewal, a fenced write) was not
// acknowledged by Options.MinReplicas replicas within Options.ReplicaTimeout. An acquisition that ends so is undone:
// the key is deleted again, so no holder runs on a lease that a failover could forget.
var ErrUnreplicated = errors.New("lease: not acknowledged by enough replicas")

// replicated runs s on the master of keys[0] and, when MinReplicas is set, WAITs on the same connection for that many
// replicas to acknowledge it. WAIT counts the writes of its own connection only and is refused inside a script,
// hence one pipeline (one connection) holding EVALSHA and WAIT, on the node that owns the key's slot in a cluster
// (a keyless WAIT through the cluster client could go to any node).
//
// acked is the number of replicas WAIT reported; it is meaningful only when err is nil and MinReplicas is set.
func (l *Locker) replicated(ctx context.Context, s *redis.Script, keys []string, args ...any) (res *redis.Cmd, acked int64, err error) {
	n := l.opts.MinReplicas
	if n <= 0 {
		return s.Run(ctx, l.client, keys, args...), 0, nil
	}
	node := redis.Cmdable(l.client)
	if cc, ok := l.client.(*redis.ClusterClient); ok {
		c, err := cc.MasterForKey(ctx, keys[0])
		if err != nil {
			return nil, 0, fmt.Errorf("find the master of %q: %w", keys[0], err)
		}
		node = c
		defer func() {
			if err != nil || res.Err() != nil {
				cc.ReloadState(ctx) // a failover or a moved slot: learn the new master before the next attempt
			}
		}()
	}
	res, wait := evalWait(ctx, node, s, true, n, l.opts.ReplicaTimeout, keys, args)
	if res.Err() != nil && strings.HasPrefix(res.Err().Error(), "NOSCRIPT") {
		res, wait = evalWait(ctx, node, s, false, n, l.opts.ReplicaTimeout, keys, args)
	}
	if res.Err() != nil && res.Err() != redis.Nil {
		return res, 0, nil // the script's own error, read by the caller as without replicas
	}
	if err := wait.Err(); err != nil {
		return res, 0, fmt.Errorf("WAIT %d: %w", n, err)
	}
	return res, wait.Val(), nil
}

// evalWait sends the script (by its SHA, or whole) and WAIT in one pipeline, so both use one connection.
func evalWait(ctx context.Context, node redis.Cmdable, s *redis.Script, sha bool, n int, timeout time.Duration,
	keys []string, args []any) (*redis.Cmd, *redis.IntCmd) {
	var res *redis.Cmd
	var wait *redis.IntCmd
	_, _ = node.Pipelined(ctx, func(p redis.Pipeliner) error {
		if sha {
			res = s.EvalSha(ctx, p, keys, args...)
		} else {
			res = s.Eval(ctx, p, keys, args...)
		}
		wait = redis.NewIntCmd(ctx, "wait", n, timeout.Milliseconds())
		_ = p.Process(ctx, wait)
		return nil
	})
	return res, wait
}

// enough reports whether a write that WAIT says acked replicas hold is replicated as the options ask.
func (l *Locker) enough(acked int64) bool { return acked >= int64(l.opts.MinReplicas) }

// undo deletes a key that was just acquired but not replicated, so that it is not held by a lease nobody was granted.
// The fence counter keeps its increment: a skipped fence is harmless, while a decrement could issue one fence twice.
func (l *Locker) undo(ctx context.Context, key, token string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(l.opts.TTL, l.opts.ReplicaTimeout+time.Second))
	defer cancel()
	lk, _ := l.keys(key)
	return releaseScript.Run(ctx, l.client, []string{lk}, token).Err()
}
