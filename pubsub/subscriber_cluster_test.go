package pubsub

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/internal/keyslot"
	"github.com/syncverse/hub/internal/rig"
)

// TestSubscriberSweepOnACluster: on a Redis Cluster the sweep's XREADs are grouped by slot (a command with keys of
// several slots is refused), so lost entries on quiet topics spread over every master are all delivered.
func TestSubscriberSweepOnACluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Redis Cluster")
	}
	_, cc := startCluster(t, 2*time.Second)
	prefix := rig.Prefix(t)
	const tick, sweep, topics = 50 * time.Millisecond, 500 * time.Millisecond, 30
	s := runSubscriber(t, NewSubscriber(cc, SubscriberConfig{Prefix: prefix, TailCheck: tick, Sweep: sweep, MaxEventBytes: 1024}))
	pub := NewPublisher(cc, PublisherConfig{Prefix: prefix})
	slots := map[int]bool{}
	ids := make([]string, topics)
	for i := range topics {
		topic := fmt.Sprintf("c%d", i)
		slots[keyslot.Of(s.keys.Stream(topic))] = true
		s.follow(t, topic)
		id, err := pub.Publish(ctxFor(t), topic, "", []byte(`{"n":"first"}`))
		if err != nil {
			t.Fatalf("Publish(%s): %v", topic, err)
		}
		ids[i] = id
	}
	s.rec.waitN(t, topics, within)
	time.Sleep(10 * tick) // quiet now: only the sweep looks at them
	for i := range topics {
		args := &redis.XAddArgs{Stream: s.keys.Stream(fmt.Sprintf("c%d", i)), Values: []string{"p", ids[i], "t", "progress", "d", `{"n":"lost"}`}}
		if err := cc.XAdd(ctxFor(t), args).Err(); err != nil {
			t.Fatalf("XADD: %v", err)
		}
	}
	got := s.rec.waitN(t, 2*topics, sweep+tick+3*time.Second)
	for i := range topics {
		if evs := onTopic(got, fmt.Sprintf("c%d", i)); len(evs) != 2 || evs[1].Prev.String() != ids[i] {
			t.Errorf("c%d on the cluster: broadcast %q, want its first event and the entry stored after it", i, describe(evs))
		}
	}
	if len(slots) < 2 {
		t.Fatalf("the %d topics hash to %d slot(s); the test needs several", topics, len(slots))
	}
}
