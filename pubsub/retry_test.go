package pubsub

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/internal/rig"
)

// scriptHook counts the publish script's attempts and can lose the reply of the next ones after Redis ran them, as
// a connection cut between the server's write and the client's read does.
type scriptHook struct {
	mu       sync.Mutex
	attempts int
	lose     int
}

func (h *scriptHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *scriptHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h *scriptHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		name := strings.ToLower(cmd.Name())
		if name != "evalsha" && name != "eval" {
			return next(ctx, cmd)
		}
		err := next(ctx, cmd)
		h.mu.Lock()
		defer h.mu.Unlock()
		h.attempts++
		if err == nil && h.lose > 0 {
			h.lose--
			err = io.ErrUnexpectedEOF
			cmd.SetErr(err)
		}
		return err
	}
}

func (h *scriptHook) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.attempts
}

// realClient is a client of a real server without go-redis's own retries, so every retry seen is the Publisher's.
func realClient(t *testing.T, rs *rig.Redis, hook *scriptHook) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: rs.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	c.AddHook(hook)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// retryRig is a real Redis, reached by a client whose script replies the hook can lose, under a prefix of the
// test's own, with a registry for the publisher's metrics.
type retryRig struct {
	rs   *rig.Redis
	hook *scriptHook
	rdb  *redis.Client
	keys Keys
	reg  *prometheus.Registry
}

func newRetryRig(t *testing.T) *retryRig {
	rs := rig.StartRedisWith(t, rig.RedisOptions{})
	hook := &scriptHook{}
	return &retryRig{rs: rs, hook: hook, rdb: realClient(t, rs, hook), keys: Keys{Prefix: rig.Prefix(t)}, reg: prometheus.NewRegistry()}
}

// TestPublishRetryAfterALostReply: the script ran but its reply was lost. A keyed publish is retried and answers
// the first id as a duplicate, so the stream holds the event once; an unkeyed one is not retried blindly.
func TestPublishRetryAfterALostReply(t *testing.T) {
	r := newRetryRig(t)
	pub := NewPublisher(r.rdb, PublisherConfig{Prefix: r.keys.Prefix, Metrics: NewPublishMetrics(r.reg)})
	ctx := ctxFor(t)

	r.hook.lose = 1
	res, err := pub.PublishMessage(ctx, Message{Topic: "t", Data: []byte(`{}`), IdempotencyKey: "k1"})
	stored, _ := r.rdb.XRange(ctx, r.keys.Stream("t"), "-", "+").Result()
	if err != nil || !res.Duplicate || res.Retries != 1 || len(stored) != 1 || stored[0].ID != res.ID {
		t.Errorf("keyed publish with a lost reply = %+v, %v; stream %v; want the stored id as a duplicate after 1 retry", res, err, stored)
	}
	if v := metricOf(t, r.reg, "hub_publish_retried_total", "outcome=duplicate"); v != 1 {
		t.Errorf("hub_publish_retried_total{duplicate} = %v, want 1", v)
	}

	r.hook.lose, r.hook.attempts = 1, 0
	if id, err := pub.Publish(ctx, "u", "", []byte(`{}`)); err == nil || r.hook.count() != 1 {
		t.Errorf("unkeyed publish with a lost reply = %q, %v after %d attempts; want the error after 1 attempt", id, err, r.hook.count())
	}
}

// TestPublishRetryAcrossARedisRestart: a keyed publish that starts while Redis is down waits for it within the
// budget; one whose budget runs out fails with the connection error, counted as failed after retries.
func TestPublishRetryAcrossARedisRestart(t *testing.T) {
	r := newRetryRig(t)
	metrics := NewPublishMetrics(r.reg)
	ctx := ctxFor(t)
	r.rs.Kill()

	short := NewPublisher(r.rdb, PublisherConfig{Prefix: r.keys.Prefix, RetryBudget: 1500 * time.Millisecond, Metrics: metrics})
	began := time.Now()
	res, err := short.PublishMessage(ctx, Message{Topic: "t", Data: []byte(`{}`), IdempotencyKey: "short"})
	if took := time.Since(began); err == nil || res.Retries == 0 || took > 4*time.Second {
		t.Errorf("keyed publish with Redis down and a 1.5 s budget = %+v, %v after %v; want an error after some retries", res, err, took)
	}
	var nerr net.Error
	if !errors.As(err, &nerr) {
		t.Errorf("the error after the budget = %v; want the connection error itself", err)
	}

	pub := NewPublisher(r.rdb, PublisherConfig{Prefix: r.keys.Prefix, Metrics: metrics})
	done := make(chan struct{})
	go func() {
		defer close(done)
		res, err = pub.PublishMessage(ctx, Message{Topic: "t", Data: []byte(`{}`), IdempotencyKey: "long"})
	}()
	r.hook.mu.Lock()
	r.hook.attempts = 0
	r.hook.mu.Unlock()
	rig.Eventually(t, within, "two failed attempts", func() bool { return r.hook.count() >= 2 })
	if err := r.rs.Start(); err != nil {
		t.Fatal(err)
	}
	<-done
	if err != nil || res.Duplicate || res.Retries < 1 {
		t.Errorf("keyed publish across a restart = %+v, %v; want a new event after retries", res, err)
	}
	rig.WantByLabel(t, rig.Gather(t, r.reg), "hub_publish_retried_total", "outcome", map[string]float64{"ok": 1, "failed": 1})
}

// TestPublishRetryOnReadOnlyUntilPromoted: a publisher still talking to a replica (as right after a failover)
// gets READONLY; a keyed publish retries until the replica is promoted, and stores the event once.
func TestPublishRetryOnReadOnlyUntilPromoted(t *testing.T) {
	primary := rig.StartRedisWith(t, rig.RedisOptions{})
	replica := rig.StartRedisWith(t, rig.RedisOptions{})
	ctx := ctxFor(t)
	host, port, _ := net.SplitHostPort(primary.Addr)
	if err := primary.Client().ConfigSet(ctx, "repl-diskless-sync-delay", "0").Err(); err != nil {
		t.Fatal(err)
	}
	admin := replica.Client()
	if err := admin.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	rig.Eventually(t, within, "the replica to sync", func() bool {
		info, err := admin.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "master_link_status:up")
	})
	hook := &scriptHook{}
	pub := NewPublisher(realClient(t, replica, hook), PublisherConfig{Prefix: rig.Prefix(t)})
	var res Result
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		res, err = pub.PublishMessage(ctx, Message{Topic: "t", Data: []byte(`{}`), IdempotencyKey: "k"})
	}()
	rig.Eventually(t, within, "two READONLY attempts", func() bool { return hook.count() >= 2 })
	if err := admin.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	<-done
	if err != nil || res.Retries < 1 {
		t.Errorf("keyed publish on a replica, promoted meanwhile = %+v, %v; want stored after retries", res, err)
	}

	unkeyed := NewPublisher(realClient(t, primary, &scriptHook{}), PublisherConfig{Prefix: rig.Prefix(t)})
	if err := primary.Client().Do(ctx, "REPLICAOF", "127.0.0.1", replica.Addr[strings.LastIndex(replica.Addr, ":")+1:]).Err(); err != nil {
		t.Fatal(err)
	}
	if id, err := unkeyed.Publish(ctx, "t", "", []byte(`{}`)); err == nil || !redis.HasErrorPrefix(err, "READONLY") {
		t.Errorf("unkeyed publish on a replica = %q, %v; want READONLY at once", id, err)
	}
}
