package pubsub

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/workflow"
)

// statesAgree publishes on topics of different sizes (one past several scan pages), then checks that States reads
// every topic as State does, first with no previous read, then after new events with the previous reads, and last
// after Redis forgot its scripts (NOSCRIPT: States falls back to State, which loads them).
func statesAgree(t *testing.T, ctx context.Context, rdb redis.UniversalClient, pub *Publisher, flush func()) {
	t.Helper()
	topics := []string{"st.a", "st.b", "st.c", "st.d"}
	for i, topic := range topics {
		for j := range 1 + 12*i {
			data := fmt.Sprintf(`{"workflow":"w%d","status":"running","eta_s":%d}`, j, j)
			if _, err := pub.Publish(ctx, topic, "progress", []byte(data)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := pub.Publish(ctx, "st.b", "lock", []byte(`{"key":"K","holder":"h","fence":4,"state":"acquired","workflow":"w0"}`)); err != nil {
		t.Fatal(err)
	}
	w := NewWorkflows(pub)
	compare := func(when string, prevs []*workflow.TopicState) []*workflow.TopicState {
		t.Helper()
		got, err := w.States(ctx, topics, prevs)
		if err != nil {
			t.Fatalf("%s: States = %v", when, err)
		}
		for i, topic := range topics {
			want, err := w.State(ctx, topic, prevs[i])
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got[i], want) {
				t.Errorf("%s: States[%s] = %+v, State = %+v", when, topic, got[i], want)
			}
		}
		if n := len(got[3].Workflows); n != 37 {
			t.Errorf("%s: st.d has %d workflows, want 37 (over several scan pages)", when, n)
		}
		return got
	}
	first := compare("first read", make([]*workflow.TopicState, len(topics)))
	for _, topic := range []string{"st.a", "st.c"} {
		if _, err := pub.Publish(ctx, topic, "progress", []byte(`{"workflow":"w0","status":"failed"}`)); err != nil {
			t.Fatal(err)
		}
	}
	again := compare("after new events", first)
	if again[0].Workflows["w0"].Status != "failed" || again[2].Workflows["w0"].Status != "failed" {
		t.Errorf("after new events: w0 of st.a and st.c = %+v, %+v; want failed", again[0].Workflows["w0"], again[2].Workflows["w0"])
	}
	flush()
	compare("after SCRIPT FLUSH", first)
}

func TestWorkflowsStatesReadAsStateDoes(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		statesAgree(t, ctx, b.rdb, b.publisher(PublisherConfig{}), func() {
			if err := b.rdb.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		})
	})
}

func TestWorkflowsStatesOnACluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Redis Cluster")
	}
	_, cc := startCluster(t, 2*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	statesAgree(t, ctx, cc, NewPublisher(cc, PublisherConfig{Prefix: rig.Prefix(t)}), func() {
		err := cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return c.ScriptFlush(ctx).Err() })
		if err != nil {
			t.Fatal(err)
		}
	})
}
