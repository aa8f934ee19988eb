package pubsub

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/syncverse/hub/internal/testutil"
)

// TestPublishIdempotencyKeyStoresOnce: the same key published twice stores one event, delivers it once and answers
// the same id, the second time marked as a duplicate; another topic's key of the same name is its own.
func TestPublishIdempotencyKeyStoresOnce(t *testing.T) {
	forBackends(t, func(t *testing.T, b *backend) {
		ctx := ctxFor(t)
		s := startSubscriber(t, b, SubscriberConfig{})
		s.follow(t, "t")
		reg := prometheus.NewRegistry()
		pub := b.publisher(PublisherConfig{Metrics: NewPublishMetrics(reg)})
		m := Message{Topic: "t", Data: []byte(`{"workflow":"wf-1","step":"a"}`), IdempotencyKey: "wf-1/a"}
		first, err := pub.PublishMessage(ctx, m)
		if err != nil || first.Duplicate || first.ID == "" {
			t.Fatalf("PublishMessage(key wf-1/a) = %+v, %v; want a new id", first, err)
		}
		m.Data = []byte(`{"workflow":"wf-1","step":"a","again":true}`) // the key decides, not the data
		again, err := pub.PublishMessage(ctx, m)
		if err != nil || !again.Duplicate || again.ID != first.ID {
			t.Fatalf("PublishMessage(key wf-1/a) again = %+v, %v; want {ID:%s Duplicate:true}", again, err, first.ID)
		}
		other, err := pub.PublishMessage(ctx, Message{Topic: "u", Data: []byte(`{}`), IdempotencyKey: "wf-1/a"})
		if err != nil || other.Duplicate {
			t.Errorf("PublishMessage(topic u, key wf-1/a) = %+v, %v; want a new event: keys are per topic", other, err)
		}
		after := b.publish(t, "t", "", `{"n":"after"}`)
		got := s.rec.waitN(t, 2, within)
		if ids := describe(got); !slices.Equal(ids, []string{first.ID, after}) {
			t.Errorf("delivered %q, want %q (the keyed event once)", ids, []string{first.ID, after})
		}
		if ids := b.streamIDs(t, "t"); !slices.Equal(ids, []string{first.ID, after}) {
			t.Errorf("stream holds %q, want %q", ids, []string{first.ID, after})
		}
		for outcome, want := range map[string]float64{"ok": 2, "duplicate": 1} {
			if v, _ := testutil.MetricValue(testutil.Gather(t, reg), "hub_publish_total", "outcome="+outcome); v != want {
				t.Errorf("hub_publish_total{outcome=%s} = %v, want %v", outcome, v, want)
			}
		}
	})
}

// TestPublishIdempotencyKeyConcurrent: publishers racing with one key store one event and all answer its id.
func TestPublishIdempotencyKeyConcurrent(t *testing.T) {
	forBackends(t, func(t *testing.T, b *backend) {
		ctx := ctxFor(t)
		const n = 16
		res := make([]Result, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				pub := b.publisher(PublisherConfig{})
				res[i], errs[i] = pub.PublishMessage(ctx, Message{Topic: "t", Data: fmt.Appendf(nil, `{"from":%d}`, i), IdempotencyKey: "k"})
			})
		}
		wg.Wait()
		fresh := 0
		for i := range n {
			if errs[i] != nil || res[i].ID != res[0].ID {
				t.Errorf("publisher %d: %+v, %v; want id %s", i, res[i], errs[i], res[0].ID)
			}
			if !res[i].Duplicate {
				fresh++
			}
		}
		if ids := b.streamIDs(t, "t"); fresh != 1 || len(ids) != 1 {
			t.Errorf("%d publishers with one key: %d answered new, stream holds %q; want 1 and one entry", n, fresh, ids)
		}
	})
}

// TestPublishIdempotencyKeyExpires: the key is remembered for history.idempotency_ttl; after it, the same key is a
// new event. The real server expires keys by itself; miniredis only when its clock is moved, so there the test
// checks the TTL it was given.
func TestPublishIdempotencyKeyExpires(t *testing.T) {
	forBackends(t, func(t *testing.T, b *backend) {
		ctx := ctxFor(t)
		const ttl = 200 * time.Millisecond
		pub := b.publisher(PublisherConfig{IdempotencyTTL: ttl})
		m := Message{Topic: "t", Data: []byte(`{}`), IdempotencyKey: "k"}
		first, err := pub.PublishMessage(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		record := b.keys.Idempotency("t", "k")
		if left, err := b.rdb.PTTL(ctx, record).Result(); err != nil || left <= 0 || left > ttl {
			t.Fatalf("PTTL %s = %v, %v; want in (0, %v]", record, left, err, ttl)
		}
		if !b.real {
			return
		}
		testutil.Eventually(t, within, "the idempotency record to expire", func() bool {
			n, err := b.rdb.Exists(ctx, record).Result()
			return err == nil && n == 0
		})
		later, err := pub.PublishMessage(ctx, m)
		if err != nil || later.Duplicate || later.ID == first.ID {
			t.Errorf("PublishMessage(key k) after its TTL = %+v, %v; want a new event after %s", later, err, first.ID)
		}
		if ids := b.streamIDs(t, "t"); len(ids) != 2 {
			t.Errorf("stream holds %q, want two events", ids)
		}
	})
}

// TestPublishIdempotencyKeyValidated: a key the contract does not allow is refused before Redis, and the script
// refuses a record key outside the topic's own namespace.
func TestPublishIdempotencyKeyValidated(t *testing.T) {
	forBackends(t, func(t *testing.T, b *backend) {
		ctx := ctxFor(t)
		pub := b.publisher(PublisherConfig{})
		for _, key := range []string{"has space", "tab\t", "é", string(make([]byte, MaxKeyLen+1))} {
			if r, err := pub.PublishMessage(ctx, Message{Topic: "t", Data: []byte(`{}`), IdempotencyKey: key}); !errors.Is(err, ErrInvalid) {
				t.Errorf("PublishMessage(key %q) = %+v, %v; want an error wrapping ErrInvalid", key, r, err)
			}
		}
		for _, record := range []string{b.keys.Idempotency("other", "k"), b.keys.Idempotency("t", ""), b.keys.State("t")} {
			_, err := publishScript.Run(ctx, b.rdb, []string{b.keys.Stream("t"), b.keys.State("t"), record},
				b.keys.Channel("t"), "progress", "{}", 100, 1024, "", 1000).Result()
			if !errors.Is(refusal(err), ErrInvalid) {
				t.Errorf("script with KEYS[3]=%s = %v; want the refusal 'invalid idempotency key'", record, err)
			}
		}
		if keys, _ := b.rdb.Keys(ctx, b.prefix+":*").Result(); len(keys) != 0 {
			t.Errorf("refused publishes left keys %q", keys)
		}
	})
}
