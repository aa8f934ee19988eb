package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// redisOrEmbedded returns url, or starts a miniredis on a free loopback port when url is empty. Child processes reach
// it over TCP like any Redis. Its TTLs follow the wall clock (ClockTTL), which leases need.
func redisOrEmbedded(url string) (string, func(), error) {
	if url != "" {
		return url, func() {}, nil
	}
	m := miniredis.NewMiniRedis()
	m.ClockTTL(true)
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		return "", nil, fmt.Errorf("start embedded redis: %w", err)
	}
	return "redis://" + m.Addr() + "/0", m.Close, nil
}

func connect(ctx context.Context, url string) (*redis.Client, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("parse redis url: %w", err)
	}
	c := redis.NewClient(opts)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.Ping(pctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("ping %s: %w", opts.Addr, err)
	}
	return c, nil
}

// cleanup deletes the run's keys, so that runs against a shared Redis leave nothing behind.
func cleanup(c *redis.Client, prefix string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return fmt.Errorf("scan %s*: %w", prefix, err)
	}
	for len(keys) > 0 {
		n := min(len(keys), 500)
		if err := c.Del(ctx, keys[:n]...).Err(); err != nil {
			return fmt.Errorf("delete %s*: %w", prefix, err)
		}
		keys = keys[n:]
	}
	return nil
}

// eventCounter is the run's lease.Announcer: it counts lock events by state instead of publishing them.
type eventCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

func (e *eventCounter) Publish(_ context.Context, _, _ string, data []byte) (string, error) {
	var ev struct {
		State string `json:"state"`
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		return "", fmt.Errorf("decode lock event: %w", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.counts == nil {
		e.counts = map[string]int{}
	}
	e.counts[ev.State]++
	return "", nil
}

func (e *eventCounter) snapshot() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[string]int, len(e.counts))
	for k, v := range e.counts {
		out[k] = v
	}
	return out
}
