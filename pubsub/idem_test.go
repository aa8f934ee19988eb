package pubsub

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/syncverse/hub/internal/rig"
)

// TestPublishIdempotencyKeyStoresOnce: the same key published twice stores one event, delivers it once and answers
// the same id, the second time marked as a duplicate; another topic's key of the same name is its own.
func TestPublishIdempotencyKeyStoresOnce(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		s := startSubscriber(t, b, SubscriberConfig{}, "t")
		reg := prometheus.NewRegistry()
		pub := b.publisher(PublisherConfig{Metrics: NewPublishMetrics(reg)})
		m := Message{Topic: "t", Data: []byte(`{"workflow":"wf-1","step":"a"}`), IdempotencyKey: "wf-1/a"}
		first, err := pub.PublishMessage(ctx, m)
		if err != nil || first.Duplicate || first.ID == "" {
			t.Fatalf("PublishMessage(key wf-1/a) = %+v, %v; want a new id", first, err)
		}
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
		rig.WantByLabel(t, rig.Gather(t, reg), "hub_publish_total", "outcome", map[string]float64{"ok": 2, "duplicate": 1})
	})
}

// TestPublishIdempotencyKeyConcurrent: attempts racing with one key and one content store one event and all answer
// its id.
func TestPublishIdempotencyKeyConcurrent(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		const n = 16
		res := make([]Result, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				pub := b.publisher(PublisherConfig{})
				res[i], errs[i] = pub.PublishMessage(ctx, Message{Topic: "t", Data: []byte(`{"n":1}`), IdempotencyKey: "k"})
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
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		const ttl = 200 * time.Millisecond
		pub := b.publisher(PublisherConfig{IdempotencyTTL: ttl})
		m := Message{Topic: "t", Data: []byte(`{}`), IdempotencyKey: "k"}
		first, err := pub.PublishMessage(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		record := b.keys.Idempotency("t", "", "k")
		if left, err := b.rdb.PTTL(ctx, record).Result(); err != nil || left <= 0 || left > ttl {
			t.Fatalf("PTTL %s = %v, %v; want in (0, %v]", record, left, err, ttl)
		}
		if !b.real {
			return
		}
		rig.Eventually(t, within, "the idempotency record to expire", func() bool {
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
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		pub := b.publisher(PublisherConfig{})
		for _, key := range []string{"has space", "tab\t", "é", string(make([]byte, MaxKeyLen+1))} {
			if r, err := pub.PublishMessage(ctx, Message{Topic: "t", Data: []byte(`{}`), IdempotencyKey: key}); !errors.Is(err, ErrInvalid) {
				t.Errorf("PublishMessage(key %q) = %+v, %v; want an error wrapping ErrInvalid", key, r, err)
			}
		}
		for _, record := range []string{b.keys.Idempotency("other", "", "k"), b.keys.Idempotency("t", "", ""),
			b.keys.State("t"), b.keys.Idempotency("t", "a", "k"), b.keys.Idempotency("t", "a:b", "k")} {
			if err := b.keyedScript(ctx, record, 1000, "a:"); !errors.Is(refusal(err), ErrInvalid) {
				t.Errorf("script with KEYS[3]=%s = %v; want the refusal 'invalid idempotency key'", record, err)
			}
		}
		b.leftNothing(t)
	})
}

// TestPublishIdempotencyKeysArePerPublisher: two publishers with one key each store their own event and learn nothing
// of the other's id; names that only differ in where a ":" falls are different publishers.
func TestPublishIdempotencyKeysArePerPublisher(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		pub := b.publisher(PublisherConfig{})
		ids := map[string]bool{}
		for _, m := range []Message{
			{Publisher: "agent-b", IdempotencyKey: "wf-7/deploy"},
			{Publisher: "agent-a", IdempotencyKey: "wf-7/deploy"},
			{Publisher: "", IdempotencyKey: "wf-7/deploy"},
			{Publisher: "a:b", IdempotencyKey: "c"},
			{Publisher: "a", IdempotencyKey: "b:c"},
			{Publisher: "a%3Ab", IdempotencyKey: "c"},
		} {
			m.Topic, m.Data = "t", []byte(`{"status":"succeeded"}`)
			r, err := pub.PublishMessage(ctx, m)
			if err != nil || r.Duplicate || ids[r.ID] {
				t.Errorf("PublishMessage(publisher %q, key %q) = %+v, %v; want a new event of its own", m.Publisher, m.IdempotencyKey, r, err)
			}
			ids[r.ID] = true
		}
		if got := b.streamIDs(t, "t"); len(got) != 6 {
			t.Errorf("stream holds %d events, want 6 (one per publisher and key)", len(got))
		}
	})
}

// TestPublishIdempotencyKeyOtherContentConflicts: a publisher's key reused with another type or data within the TTL
// is refused with ErrConflict and stores nothing; the same content again is still the duplicate.
func TestPublishIdempotencyKeyOtherContentConflicts(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		reg := prometheus.NewRegistry()
		pub := b.publisher(PublisherConfig{Metrics: NewPublishMetrics(reg)})
		m := Message{Topic: "t", Type: "progress", Data: []byte(`{"step":"a"}`), IdempotencyKey: "k", Publisher: "p"}
		first, err := pub.PublishMessage(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		for _, other := range []Message{
			{Topic: "t", Type: "progress", Data: []byte(`{"step":"b"}`), IdempotencyKey: "k", Publisher: "p"},
			{Topic: "t", Type: "log", Data: []byte(`{"step":"a"}`), IdempotencyKey: "k", Publisher: "p"},
		} {
			if r, err := pub.PublishMessage(ctx, other); !errors.Is(err, ErrConflict) || r.ID != "" {
				t.Errorf("PublishMessage(%s %s, same key) = %+v, %v; want ErrConflict and no id", other.Type, other.Data, r, err)
			}
		}
		if r, err := pub.PublishMessage(ctx, m); err != nil || !r.Duplicate || r.ID != first.ID {
			t.Errorf("PublishMessage(same content) = %+v, %v; want the duplicate of %s", r, err, first.ID)
		}
		if ids := b.streamIDs(t, "t"); len(ids) != 1 {
			t.Errorf("stream holds %q, want the first event only", ids)
		}
		if v := metricOf(t, reg, "hub_publish_total", "outcome=conflict"); v != 2 {
			t.Errorf("hub_publish_total{outcome=conflict} = %v, want 2", v)
		}
	})
}

// TestPublishIdempotencyTTLCeiling: a TTL past MaxIdempotencyTTL is held to it by the Publisher, and the script
// refuses one from a caller that sends more.
func TestPublishIdempotencyTTLCeiling(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		pub := b.publisher(PublisherConfig{IdempotencyTTL: 30 * 24 * time.Hour})
		if _, err := pub.PublishMessage(ctx, Message{Topic: "t", Data: []byte(`{}`), IdempotencyKey: "k"}); err != nil {
			t.Fatal(err)
		}
		if left, err := b.rdb.PTTL(ctx, b.keys.Idempotency("t", "", "k")).Result(); err != nil || left > MaxIdempotencyTTL {
			t.Errorf("PTTL of the record = %v, %v; want at most %v", left, err, MaxIdempotencyTTL)
		}
		err := b.keyedScript(ctx, b.keys.Idempotency("t", "", "k2"), MaxIdempotencyTTL.Milliseconds()+1, "")
		if !errors.Is(refusal(err), ErrInvalid) {
			t.Errorf("script with a TTL over 24h = %v; want the refusal 'invalid idempotency ttl'", err)
		}
	})
}

// keyedScript runs the publish script of an event {} on topic t with record as its idempotency key (KEYS[3]), ttl
// milliseconds and publisher as the record's publisher part, as any client could.
func (b *backend) keyedScript(ctx context.Context, record string, ttl int64, publisher string) error {
	return publishScript.Run(ctx, b.rdb, []string{b.keys.Stream("t"), b.keys.State("t"), record},
		b.keys.Channel("t"), "progress", "{}", 100, 1024, "", ttl, publisher).Err()
}
