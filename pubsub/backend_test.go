package pubsub

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/rig"
)

// backend is one Redis server for one test, with a key prefix no other test uses.
type backend struct {
	rdb    *redis.Client
	rs     *rig.Redis // nil for the explicit miniredis run
	real   bool
	prefix string
	keys   Keys
}

// forBackends runs fn against the server rig.Start gives (a real redis-server when installed) and against
// miniredis, so one test body covers both.
func forBackends(t *testing.T, fn func(t *testing.T, b *backend)) {
	t.Run("redis", func(t *testing.T) {
		rs := rig.StartRedis(t)
		p := rig.Prefix(t)
		fn(t, &backend{rdb: rs.Client(), rs: rs, real: rs.Real(), prefix: p, keys: Keys{Prefix: p}})
	})
	t.Run("miniredis", func(t *testing.T) {
		m := miniredis.RunT(t)
		c := redis.NewClient(&redis.Options{Addr: m.Addr()})
		t.Cleanup(func() { _ = c.Close() })
		p := rig.Prefix(t)
		fn(t, &backend{rdb: c, prefix: p, keys: Keys{Prefix: p}})
	})
}

// realBackend is a backend on a real redis-server, for what miniredis cannot do (CLIENT KILL, trimming by age). It
// skips the test when redis-server is not installed, and fails it under CI, as rig.StartReal does.
func realBackend(t *testing.T) *backend {
	t.Helper()
	rs := rig.StartRedisWith(t, rig.RedisOptions{})
	p := rig.Prefix(t)
	return &backend{rdb: rs.Client(), rs: rs, real: true, prefix: p, keys: Keys{Prefix: p}}
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func (b *backend) publisher(cfg PublisherConfig) *Publisher {
	cfg.Prefix = b.prefix
	return NewPublisher(b.rdb, cfg)
}

func (b *backend) store() *History {
	return NewHistory(b.rdb, HistoryConfig{Prefix: b.prefix, MaxEventBytes: 1024})
}

// publish publishes with the script and returns the id, failing the test on an error.
func (b *backend) publish(t *testing.T, topic, typ, data string) string {
	t.Helper()
	id, err := b.publisher(PublisherConfig{}).Publish(ctxFor(t), topic, typ, []byte(data))
	if err != nil {
		t.Fatalf("Publish(%s, %s, %s) = %v", topic, typ, data, err)
	}
	return id
}

// script runs the publish script as any client could, with channel as the live channel.
func (b *backend) script(ctx context.Context, topic, channel, typ, data string, maxLen, maxBytes int, minID string) (string, error) {
	return publishScript.Run(ctx, b.rdb, []string{b.keys.Stream(topic), b.keys.State(topic)},
		channel, typ, data, maxLen, maxBytes, minID).Text()
}

// publishElsewhere stores an event with the script but publishes its envelope on another channel, as if the live
// message were lost.
func (b *backend) publishElsewhere(t *testing.T, topic, data string) string {
	t.Helper()
	id, err := b.script(ctxFor(t), topic, b.prefix+":nowhere", "progress", data, 10000, 1<<16, "")
	if err != nil {
		t.Fatalf("publish script to another channel: %v", err)
	}
	return id
}

// xadd writes a raw entry, as something other than the script might.
func (b *backend) xadd(t *testing.T, topic string, values ...string) string {
	t.Helper()
	id, err := b.rdb.XAdd(ctxFor(t), &redis.XAddArgs{Stream: b.keys.Stream(topic), Values: values}).Result()
	if err != nil {
		t.Fatalf("XADD %s %q: %v", topic, values, err)
	}
	return id
}

// leftNothing fails the test when any key under the backend's prefix exists: the refused publishes stored nothing.
func (b *backend) leftNothing(t *testing.T) {
	t.Helper()
	if keys, _ := b.rdb.Keys(ctxFor(t), b.prefix+":*").Result(); len(keys) != 0 {
		t.Errorf("refused publishes left keys %q", keys)
	}
}

func (b *backend) streamIDs(t *testing.T, topic string) []string {
	t.Helper()
	msgs, err := b.rdb.XRange(ctxFor(t), b.keys.Stream(topic), "-", "+").Result()
	if err != nil {
		t.Fatalf("XRANGE %s: %v", topic, err)
	}
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.ID
	}
	return out
}

// metered returns a fresh registry, to read what a History or Subscriber counted.
func metered() *prometheus.Registry { return prometheus.NewRegistry() }

// recorder is a Broadcaster that keeps what it is given.
type recorder struct {
	mu  sync.Mutex
	evs []*hub.Event
}

func (r *recorder) Broadcast(ev *hub.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, ev)
}

func (r *recorder) got() []*hub.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*hub.Event(nil), r.evs...)
}

// waitN waits until at least n events were broadcast and returns them all.
func (r *recorder) waitN(t *testing.T, n int, within time.Duration) []*hub.Event {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		got := r.got()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %d events broadcast %q, want %d", within, len(got), describe(got), n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func describe(evs []*hub.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		switch {
		case ev.Type == "reset":
			out[i] = "reset" + string(ev.Data)
		case ev.Stored():
			out[i] = ev.IDText
		default:
			out[i] = "ephemeral" + string(ev.Data)
		}
	}
	return out
}

// redisXAdd is a raw XADD with an explicit id.
type redisXAdd struct{ stream, id string }

func (x redisXAdd) args() *redis.XAddArgs {
	return &redis.XAddArgs{Stream: x.stream, ID: x.id, Values: []string{"p", "0-0", "t", "progress", "d", "{}"}}
}
