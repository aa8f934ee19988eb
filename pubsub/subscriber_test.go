package pubsub

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/rig"
)

const within = 10 * time.Second

type running struct {
	*Subscriber
	rec *recorder
	reg *prometheus.Registry
}

// startSubscriber runs a Subscriber on b until the test ends, feeding a recorder, and follows topics.
func startSubscriber(t *testing.T, b *backend, cfg SubscriberConfig, topics ...string) *running {
	t.Helper()
	reg := metered()
	cfg.Prefix, cfg.Registerer = b.prefix, reg
	if cfg.MaxEventBytes == 0 {
		cfg.MaxEventBytes = 1024
	}
	r := runSubscriber(t, NewSubscriber(b.rdb, cfg))
	r.reg = reg
	for _, topic := range topics {
		r.follow(t, topic)
	}
	return r
}

// runSubscriber runs s until the test ends, feeding a recorder.
func runSubscriber(t *testing.T, s *Subscriber) *running {
	t.Helper()
	rec := &recorder{}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = s.Run(ctx, rec) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return &running{Subscriber: s, rec: rec}
}

// followFirst starts a subscriber with cfg, follows "t" and waits for a first event there; it returns the subscriber
// and that event's id.
func followFirst(t *testing.T, b *backend, cfg SubscriberConfig) (*running, string) {
	t.Helper()
	s := startSubscriber(t, b, cfg, "t")
	a := b.publish(t, "t", "", `{"n":"a"}`)
	s.rec.waitN(t, 1, within)
	return s, a
}

func (r *running) follow(t *testing.T, topic string) {
	t.Helper()
	select {
	case <-r.Follow(topic):
	case <-time.After(within):
		t.Fatalf("Follow(%s): not ready within %v", topic, within)
	}
}

// checkChain fails unless evs are exactly want, in order, each Prev the id before it.
func checkChain(t *testing.T, what string, evs []*hub.Event, want []string) {
	t.Helper()
	if got := describe(evs); !slices.Equal(got, want) {
		t.Fatalf("%s: broadcast %q, want %q", what, got, want)
	}
	for i := 1; i < len(evs); i++ {
		if evs[i].Prev != evs[i-1].ID {
			t.Errorf("%s: event %s has Prev %v, want %s", what, evs[i].IDText, evs[i].Prev, evs[i-1].IDText)
		}
	}
}

func TestSubscriberDeliversLiveInOrder(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		s := startSubscriber(t, b, SubscriberConfig{})
		before := b.publish(t, "t", "", `{"n":"before"}`) // stored before Follow: not broadcast
		s.follow(t, "t")
		pub := b.publisher(PublisherConfig{})
		var want []string
		for i := range 50 {
			id, err := pub.Publish(ctx, "t", "", fmt.Appendf(nil, `{"n":%d}`, i))
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, id)
		}
		got := s.rec.waitN(t, len(want), within)
		checkChain(t, "50 live publishes", got, want)
		if got[0].Prev.String() != before {
			t.Errorf("first live event's Prev = %v, want %s", got[0].Prev, before)
		}
		if !s.Ready() {
			t.Errorf("Ready() = false while the pub/sub connection is up")
		}
		if v := metricOf(t, s.reg, "hub_redis_followed_topics"); v != 1 {
			t.Errorf("hub_redis_followed_topics = %v, want 1", v)
		}
	})
}

// TestSubscriberFollowReadyAfterConfirmation: Follow's channel closes once the subscription is confirmed, so a
// first SUBSCRIBE is not counted as a resubscription nor followed by a repair read.
func TestSubscriberFollowReadyAfterConfirmation(t *testing.T) {
	forBackends(t, func(t *testing.T, _ context.Context, b *backend) {
		s := startSubscriber(t, b, SubscriberConfig{TailCheck: time.Hour}, "t")
		a := b.publish(t, "t", "", `{"n":"a"}`)
		got := s.rec.waitN(t, 1, within)
		if got[0].IDText != a || got[0].Source != hub.SourceLive {
			t.Errorf("first event after Follow: %s from %s, want %s from live", got[0].IDText, got[0].Source, a)
		}
		if v := metricOf(t, s.reg, "hub_redis_resubscriptions_total"); v != 0 {
			t.Errorf("hub_redis_resubscriptions_total = %v after one Follow and no reconnect, want 0", v)
		}
	})
}

func TestSubscriberEphemeral(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		s := startSubscriber(t, b, SubscriberConfig{}, "t")
		ch := b.keys.Channel("t")
		b.rdb.Publish(ctx, ch, `not json`)
		b.rdb.Publish(ctx, ch, `{"workflow":"wf-1","note":"ephemeral"}`)
		got := s.rec.waitN(t, 1, within)
		if len(got) != 1 || got[0].Stored() || got[0].Source != hub.SourceEphemeral || got[0].Type != hub.DefaultType {
			t.Errorf("plain PUBLISH of garbage then JSON: broadcast %q, want only the JSON, ephemeral", describe(got))
		}
	})
}

func TestSubscriberRepairsALostMessage(t *testing.T) {
	forBackends(t, func(t *testing.T, _ context.Context, b *backend) {
		s, a := followFirst(t, b, SubscriberConfig{TailCheck: time.Hour})
		lost1 := b.publishElsewhere(t, "t", `{"n":"lost1"}`)
		lost2 := b.publishElsewhere(t, "t", `{"n":"lost2"}`)
		c := b.publish(t, "t", "", `{"n":"c"}`) // its prev reveals the gap
		d := b.publish(t, "t", "", `{"n":"d"}`)
		got := s.rec.waitN(t, 5, within)
		time.Sleep(50 * time.Millisecond) // a late duplicate would show now
		got = s.rec.got()
		checkChain(t, "a, two lost, c, d", got, []string{a, lost1, lost2, c, d})
		if got[1].Source != hub.SourceRepair {
			t.Errorf("lost event came from %s, want repair", got[1].Source)
		}
		if v := metricOf(t, s.reg, "hub_redis_gaps_total"); v < 1 {
			t.Errorf("hub_redis_gaps_total = %v after a gap, want ≥ 1", v)
		}
	})
}

func TestSubscriberTailCheckCatchesALostLastMessage(t *testing.T) {
	forBackends(t, func(t *testing.T, _ context.Context, b *backend) {
		s := startSubscriber(t, b, SubscriberConfig{TailCheck: 30 * time.Millisecond}, "t")
		a := b.publish(t, "t", "", `{"n":"a"}`)
		lost := b.publishElsewhere(t, "t", `{"n":"lost"}`) // nothing published after it would reveal it
		checkChain(t, "a then a lost last message", s.rec.waitN(t, 2, within), []string{a, lost})
	})
}

func TestSubscriberRepairsAfterPubSubConnectionKilled(t *testing.T) {
	b := realBackend(t) // CLIENT KILL needs a real redis-server: miniredis has no pub/sub connection to kill
	s, a := followFirst(t, b, SubscriberConfig{TailCheck: time.Hour, PingEvery: 200 * time.Millisecond})
	if err := b.rdb.Do(ctxFor(t), "CLIENT", "KILL", "TYPE", "pubsub").Err(); err != nil {
		t.Fatalf("CLIENT KILL TYPE pubsub: %v", err)
	}
	lost := b.publishElsewhere(t, "t", `{"n":"while away"}`) // only the resubscription can reveal it
	checkChain(t, "a, then one while the connection was killed", s.rec.waitN(t, 2, within), []string{a, lost})
	if v := metricOf(t, s.reg, "hub_redis_resubscriptions_total"); v < 1 {
		t.Errorf("hub_redis_resubscriptions_total = %v after CLIENT KILL, want ≥ 1", v)
	}
	c := b.publish(t, "t", "", `{"n":"c"}`)
	checkChain(t, "live again", s.rec.waitN(t, 3, within), []string{a, lost, c})
}

func TestSubscriberInvalidEnvelopeDoesNotPoisonThePosition(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		s, a := followFirst(t, b, SubscriberConfig{MaxEventBytes: 64})
		ch := b.keys.Channel("t")
		next := fmt.Sprintf("%d-0", mustID(t, a).Ms+1)
		for _, bad := range []string{
			`{"id":"x","prev":"0-0","type":"progress","data":{}}`,
			fmt.Sprintf(`{"id":%q,"prev":"zz","type":"progress","data":{}}`, next),
			fmt.Sprintf(`{"id":%q,"prev":%q,"type":"BAD","data":{}}`, next, a),
			fmt.Sprintf(`{"id":%q,"prev":%q,"type":"progress","data":"%s"}`, next, a, strings.Repeat("x", 100)),
		} {
			if err := b.rdb.Publish(ctx, ch, bad).Err(); err != nil {
				t.Fatal(err)
			}
		}
		c := b.publish(t, "t", "", `{"n":"c"}`)
		got := s.rec.waitN(t, 2, within)
		checkChain(t, "a, four bad envelopes, c", got, []string{a, c})
		if v := metricOf(t, s.reg, "hub_events_dropped_total"); v < 4 {
			t.Errorf("hub_events_dropped_total = %v after 4 bad envelopes, want ≥ 4", v)
		}
	})
}

// TestSubscriberForgedEnvelopeDoesNotSilenceTheTopic: a well-formed envelope whose id is not in the stream must not
// move the position past events that are.
func TestSubscriberForgedEnvelopeDoesNotSilenceTheTopic(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		s, a := followFirst(t, b, SubscriberConfig{TailCheck: 30 * time.Millisecond})
		forged := fmt.Sprintf(`{"id":"99999999999999-0","prev":%q,"type":"progress","data":{}}`, a)
		b.rdb.Publish(ctx, b.keys.Channel("t"), forged)
		c := b.publish(t, "t", "", `{"n":"c"}`)
		rig.Eventually(t, within, "the real event after a forged envelope", func() bool {
			return slices.Contains(describe(s.rec.got()), c)
		})
	})
}

// TestSubscriberTailCheckCountsAnInvalidEntryOnce: an invalid entry at the stream's end is dropped and counted once,
// not again at every tail check.
func TestSubscriberTailCheckCountsAnInvalidEntryOnce(t *testing.T) {
	forBackends(t, func(t *testing.T, _ context.Context, b *backend) {
		s, a := followFirst(t, b, SubscriberConfig{TailCheck: 20 * time.Millisecond})
		// A tail check between a's XADD and its live message counts a gap of its own (and repairs a): count from here.
		before := metricOf(t, s.reg, "hub_redis_gaps_total")
		b.xadd(t, "t", "p", a, "t", "BAD", "d", "{}")
		rig.Eventually(t, within, "the invalid entry to be dropped", func() bool {
			v := metricOf(t, s.reg, "hub_events_dropped_total", "reason="+dropBadType)
			return v >= 1
		})
		time.Sleep(200 * time.Millisecond) // ten tail checks
		if v := metricOf(t, s.reg, "hub_events_dropped_total", "reason="+dropBadType); v != 1 {
			t.Errorf("hub_events_dropped_total{bad_type} = %v after 10 tail checks of one invalid entry, want 1", v)
		}
		if v := metricOf(t, s.reg, "hub_redis_gaps_total"); v-before > 1 {
			t.Errorf("hub_redis_gaps_total rose by %v for one invalid entry, want at most 1", v-before)
		}
	})
}

func TestSubscriberUnfollowUnsubscribes(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		s := startSubscriber(t, b, SubscriberConfig{}, "t", "u")
		ch := b.keys.Channel("t")
		numsub := func() int64 {
			n, err := b.rdb.PubSubNumSub(ctx, ch).Result()
			if err != nil {
				t.Fatal(err)
			}
			return n[ch]
		}
		if n := numsub(); n != 1 {
			t.Fatalf("PUBSUB NUMSUB %s after Follow = %d, want 1", ch, n)
		}
		s.Unfollow("t")
		rig.Eventually(t, within, "PUBSUB NUMSUB "+ch+" = 0 after Unfollow", func() bool { return numsub() == 0 })
		b.publish(t, "t", "", `{"n":"after unfollow"}`)
		u := b.publish(t, "u", "", `{"n":"u"}`)
		got := s.rec.waitN(t, 1, within)
		if d := describe(got); !slices.Equal(d, []string{u}) {
			t.Errorf("after Unfollow(t): broadcast %q, want only u's %s", d, u)
		}
		s.follow(t, "t") // following again works
		tt := b.publish(t, "t", "", `{"n":"again"}`)
		got = s.rec.waitN(t, 2, within)
		if got[1].IDText != tt {
			t.Errorf("after Follow(t) again: broadcast %q, want %s", describe(got), tt)
		}
	})
}

func TestSubscriberRunEndsWithItsContext(t *testing.T) {
	forBackends(t, func(t *testing.T, _ context.Context, b *backend) {
		s := NewSubscriber(b.rdb, SubscriberConfig{Prefix: b.prefix})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Run(ctx, &recorder{}) }()
		select {
		case <-s.Follow("t"):
		case <-time.After(within):
			t.Fatal("Follow not ready")
		}
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run after cancel = %v, want nil", err)
			}
		case <-time.After(within):
			t.Fatal("Run did not return after its context ended")
		}
		if s.Ready() {
			t.Errorf("Ready() = true after Run returned")
		}
	})
}

func TestSubscriberQueueOverflowIsRepaired(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		s := startSubscriber(t, b, SubscriberConfig{QueueLimit: 1, TailCheck: time.Hour}, "t")
		pub := b.publisher(PublisherConfig{})
		ids := publishBatch(t, ctx, pub, messages("t", `{"i":%d}`, 200))
		got := s.rec.waitN(t, 200, within)
		checkChain(t, "200 published into a queue of 1", got, ids)
	})
}

func mustID(t *testing.T, s string) hub.ID {
	t.Helper()
	id, err := hub.ParseID(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
