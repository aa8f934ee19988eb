package pubsub

import (
	"context"
	"errors"
	"fmt"
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

// forBackends runs fn against the server rig.StartRedis gives (a real redis-server when installed) and against
// miniredis, so one test body covers both; fn's ctx is ctxFor(t) of its subtest.
func forBackends(t *testing.T, fn func(t *testing.T, ctx context.Context, b *backend)) {
	t.Run("redis", func(t *testing.T) {
		rs := rig.StartRedis(t)
		p := rig.Prefix(t)
		fn(t, ctxFor(t), &backend{rdb: rs.Client(), rs: rs, real: rs.Real(), prefix: p, keys: Keys{Prefix: p}})
	})
	t.Run("miniredis", func(t *testing.T) {
		m := miniredis.RunT(t)
		c := redis.NewClient(&redis.Options{Addr: m.Addr()})
		t.Cleanup(func() { _ = c.Close() })
		p := rig.Prefix(t)
		fn(t, ctxFor(t), &backend{rdb: c, prefix: p, keys: Keys{Prefix: p}})
	})
}

// realBackend is a backend on a real redis-server, for what miniredis cannot do (CLIENT KILL, trimming by age). It
// skips the test when redis-server is not installed, and fails it under CI, as rig.StartRedisWith does.
func realBackend(t *testing.T) *backend {
	t.Helper()
	rs := rig.StartRedisWith(t, rig.RedisOptions{})
	p := rig.Prefix(t)
	return &backend{rdb: rs.Client(), rs: rs, real: true, prefix: p, keys: Keys{Prefix: p}}
}

// ctxFor is a context that ends with the test, after 20 seconds at the most.
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

func (b *backend) workflows() *Workflows { return NewWorkflows(b.publisher(PublisherConfig{})) }

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

// entry reads the entry id of topic's stream, failing the test unless it is there.
func (b *backend) entry(t *testing.T, topic, id string) redis.XMessage {
	t.Helper()
	entries, err := b.rdb.XRange(ctxFor(t), b.keys.Stream(topic), id, id).Result()
	if err != nil || len(entries) != 1 {
		t.Fatalf("XRANGE %s %s %s = %v, %v", b.keys.Stream(topic), id, id, entries, err)
	}
	return entries[0]
}

// subscribe subscribes to topic's live channel and returns once Redis confirmed it; it is closed when the test ends.
func (b *backend) subscribe(t *testing.T, topic string) *redis.PubSub {
	t.Helper()
	ctx := ctxFor(t)
	ps := b.rdb.Subscribe(ctx, b.keys.Channel(topic))
	t.Cleanup(func() { _ = ps.Close() })
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatalf("SUBSCRIBE %s: %v", b.keys.Channel(topic), err)
	}
	return ps
}

// addStreams writes an entry with id to the stream of each topic, in one pipeline.
func (b *backend) addStreams(t *testing.T, id string, topics ...string) {
	t.Helper()
	ctx := ctxFor(t)
	pipe := b.rdb.Pipeline()
	for _, topic := range topics {
		pipe.XAdd(ctx, redisXAdd{stream: b.keys.Stream(topic), id: id}.args())
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatalf("XADD to %d streams: %v", len(topics), err)
	}
}

// numbered is n names made by format from 0 to n-1.
func numbered(format string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(format, i)
	}
	return out
}

// messages is n messages on topic, their data made by format from 0 to n-1.
func messages(topic, format string, n int) []Message {
	out := make([]Message, n)
	for i, data := range numbered(format, n) {
		out[i] = Message{Topic: topic, Data: []byte(data)}
	}
	return out
}

// state reads topic's state hash.
func (b *backend) state(t *testing.T, topic string) map[string]string {
	t.Helper()
	h, err := b.rdb.HGetAll(ctxFor(t), b.keys.State(topic)).Result()
	if err != nil {
		t.Fatalf("HGETALL %s: %v", b.keys.State(topic), err)
	}
	return h
}

// publishBatch publishes msgs in one PublishBatch and returns their ids, failing the test on any error.
func publishBatch(t *testing.T, ctx context.Context, pub *Publisher, msgs []Message) []string {
	t.Helper()
	ids, errs := pub.PublishBatch(ctx, msgs)
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("PublishBatch(%d messages): %v", len(msgs), err)
	}
	return ids
}

// startCluster starts a Redis Cluster of three masters (nodeTimeout is its cluster-node-timeout) and a client on it,
// closed when the test ends.
func startCluster(t *testing.T, nodeTimeout time.Duration) (*rig.Cluster, *redis.ClusterClient) {
	t.Helper()
	cluster := rig.StartCluster(t, 3, 0, nodeTimeout)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cluster.Addrs()})
	t.Cleanup(func() { _ = cc.Close() })
	return cluster, cc
}

// metered returns a fresh registry, to read what a History or Subscriber counted.
func metered() *prometheus.Registry { return prometheus.NewRegistry() }

// metricOf reads name from reg, summed over its series with labels ("k=v"); 0 when none has them.
func metricOf(t *testing.T, reg prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	v, _ := rig.MetricValue(rig.Gather(t, reg), name, labels...)
	return v
}

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
