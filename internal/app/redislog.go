package app

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// redisLog takes go-redis's own log lines (one logger per process, set by LogRedis) as the hub's warnings. While
// Redis is down, go-redis says "failed to dial" about twice a second; redisLog says it once, then sums the failed dials
// up every `every` (still down, how long, how many), and says when a dial succeeds again (dialWatch tells it).
type redisLog struct {
	log   zerolog.Logger
	every time.Duration
	now   func() time.Time

	mu      sync.Mutex
	down    bool
	since   time.Time // the first failed dial of this outage
	summary time.Time // the last line about it
	failed  int       // failed dials in this outage
}

// redisSummaryEvery is how often an outage's failed dials are summed up.
const redisSummaryEvery = 30 * time.Second

// quietRedisKey marks the context of a terminal client's command (hub publish): its own error says what failed,
// and go-redis's lines about it are not printed.
type quietRedisKey struct{}

// quietDials counts the terminal clients running (hub publish): while one runs, go-redis's failed dials are not
// logged, since some of its dials run on contexts of its own that quietRedisKey cannot mark. In the process of hub
// publish, that is every one.
var quietDials atomic.Int32

// quietRedis is ctx for a command whose Redis errors go-redis must not log; call the returned func when it is done.
func quietRedis(ctx context.Context) (context.Context, func()) {
	quietDials.Add(1)
	return context.WithValue(ctx, quietRedisKey{}, true), func() { quietDials.Add(-1) }
}

// theRedisLog is the process's, once LogRedis set it; serve's clients tell it of their dials.
var theRedisLog struct {
	sync.Mutex
	l *redisLog
}

func newRedisLog(log zerolog.Logger, every time.Duration) *redisLog {
	return &redisLog{log: log.With().Str("component", "go-redis").Logger(), every: every, now: time.Now}
}

func (l *redisLog) Printf(ctx context.Context, format string, v ...any) {
	if ctx != nil && ctx.Value(quietRedisKey{}) != nil {
		return
	}
	msg := strings.TrimSpace(fmt.Sprintf(format, v...))
	if !strings.Contains(msg, "failed to dial") {
		l.log.Warn().Msg(msg)
		return
	}
	if quietDials.Load() > 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if !l.down {
		l.down, l.since, l.summary, l.failed = true, now, now, 1
		l.log.Warn().Str("error", msg).Msgf("redis unreachable: dials fail; summed up every %v until one succeeds", l.every)
		return
	}
	l.failed++
	if now.Sub(l.summary) >= l.every {
		l.summary = now
		l.log.Warn().Int("failed_dials", l.failed).Str("down_for", now.Sub(l.since).Round(time.Second).String()).
			Str("error", msg).Msg("redis still unreachable")
	}
}

// dialed is told of a successful dial: an outage, if one was logged, is over.
func (l *redisLog) dialed() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.down {
		return
	}
	l.down = false
	l.log.Info().Int("failed_dials", l.failed).Str("down_for", l.now().Sub(l.since).Round(time.Second).String()).
		Msg("redis reachable again")
}

// watchDials tells the process's go-redis log of rdb's successful dials, on every node of a cluster.
func watchDials(rdb redis.UniversalClient) {
	theRedisLog.Lock()
	l := theRedisLog.l
	theRedisLog.Unlock()
	if l == nil {
		return
	}
	if c, ok := rdb.(*redis.ClusterClient); ok {
		c.OnNewNode(func(n *redis.Client) { n.AddHook(dialWatch{l}) })
	}
	rdb.AddHook(dialWatch{l})
}

// dialWatch is the go-redis hook that tells a redisLog of successful dials.
type dialWatch struct{ l *redisLog }

func (w dialWatch) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := next(ctx, network, addr)
		if err == nil {
			w.l.dialed()
		}
		return c, err
	}
}

func (dialWatch) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (dialWatch) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// failedDials is how many dials failed in the outage under way (0 when none is).
func (l *redisLog) failedDials() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.down {
		return 0
	}
	return l.failed
}
