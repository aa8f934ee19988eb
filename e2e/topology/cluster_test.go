//go:build slow

package topology

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/pubsub"
)

// Topics spread over every slot's master reach an SSE client through a hub on the cluster, in order and exactly
// once, also across a kill of every pub/sub connection; replay reads each topic back from its own master.
func TestRedisCluster(t *testing.T) {
	masters := rig.StartCluster(t, 3, 0, 2*time.Second).Addrs()
	url := "redis+cluster://" + strings.Join(masters, ",")
	for _, sharded := range []bool{false, true} {
		t.Run(fmt.Sprintf("sharded=%v", sharded), func(t *testing.T) { testCluster(t, url, masters, sharded) })
	}
}

func testCluster(t *testing.T, url string, masters []string, sharded bool) {
	ctx := context.Background()
	const topics, perPhase = 48, 8
	prefix := fmt.Sprintf("c%d", time.Now().UnixNano())
	h := hubtest.RunDeployed(t, map[string]string{
		"HUB_REDIS_URL": url, "HUB_REDIS_PREFIX": prefix, "HUB_REDIS_SHARDED_PUBSUB": strconv.FormatBool(sharded),
		// The tail check would hide a lost resubscription; an hour is longer than the test.
		"HUB_REDIS_TAIL_CHECK": "1h", "HUB_LIMITS_MAX_TOPICS_PER_STREAM": strconv.Itoa(topics),
	})
	rdb, err := pubsub.NewClient(url)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	cc := rdb.(*redis.ClusterClient)
	pub := pubsub.NewPublisher(rdb, pubsub.PublisherConfig{Prefix: prefix, Sharded: sharded})
	keys := pubsub.Keys{Prefix: prefix}

	names := make([]string, topics)
	owners := map[string]int{}
	for i := range names {
		names[i] = "proj." + strconv.Itoa(i)
		node, err := cc.MasterForKey(ctx, keys.Stream(names[i]))
		if err != nil {
			t.Fatalf("MasterForKey: %v", err)
		}
		owners[node.Options().Addr]++
	}
	if len(owners) != len(masters) {
		t.Fatalf("topics land on masters %v, want all of %v", owners, masters)
	}

	// From the start of every topic, so that events published while the hub subscribes are replayed, not skipped.
	start := make([]string, len(names))
	for i, n := range names {
		start[i] = n + "=0-0"
	}
	stream := rig.OpenStream(t, h.URL, rig.TopicQuery(names...), strings.Join(start, ";"))
	publish := func(from int) {
		var wg sync.WaitGroup
		for _, topic := range names {
			wg.Go(func() {
				for seq := from; seq < from+perPhase; seq++ {
					body := fmt.Sprintf(`{"workflow":"wf","topic":%q,"seq":%d}`, topic, seq)
					if _, err := pub.Publish(ctx, topic, "progress", []byte(body)); err != nil {
						t.Errorf("Publish(%s, %d) = %v", topic, seq, err)
					}
				}
			})
		}
		wg.Wait()
	}
	next := map[string]int{}
	consume := func(upTo int) {
		t.Helper()
		defer func() {
			if t.Failed() {
				t.Logf("events per topic: %v\nlogs:\n%s", next, lastLines(h.Output.String(), 20))
			}
		}()
		for _, f := range stream.Events(topics*perPhase, 20*time.Second) {
			var d struct {
				Topic string
				Seq   int
			}
			if err := json.Unmarshal([]byte(f.Data), &d); err != nil {
				t.Fatalf("event data %q: %v", f.Data, err)
			}
			if d.Seq != next[d.Topic] {
				t.Fatalf("topic %s: got seq %d, want %d (lost, repeated or out of order)", d.Topic, d.Seq, next[d.Topic])
			}
			next[d.Topic]++
		}
		for _, topic := range names {
			if next[topic] != upTo {
				t.Fatalf("topic %s: %d events, want %d", topic, next[topic], upTo)
			}
		}
	}

	publish(0)
	consume(perPhase)

	// Every master drops its pub/sub clients while agents keep publishing: the resubscription must repair each
	// topic from its stream.
	done := make(chan struct{})
	go func() { defer close(done); publish(perPhase) }()
	for _, m := range masters {
		c := redis.NewClient(&redis.Options{Addr: m})
		if err := c.ClientKillByFilter(ctx, "TYPE", "pubsub").Err(); err != nil {
			t.Errorf("CLIENT KILL TYPE pubsub on %s: %v", m, err)
		}
		_ = c.Close()
	}
	<-done
	consume(2 * perPhase)
	h.WaitReady(10 * time.Second)

	// Replay of one topic per master, from the start.
	for _, topic := range names[:6] {
		s := rig.OpenStream(t, h.URL, rig.TopicQuery(topic), "0-0")
		for seq, f := range s.Events(2*perPhase, 10*time.Second) {
			if want := fmt.Sprintf(`"seq":%d}`, seq); !strings.HasSuffix(f.Data, want) {
				t.Fatalf("replay of %s: event %d = %s, want %s", topic, seq, f.Data, want)
			}
		}
		s.Close()
	}

	// GET /topics lists every topic, though each master holds only some.
	resp, err := http.Get(h.URL + "/topics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct{ Topics []struct{ Name string } }
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatalf("GET /topics: %v", err)
	}
	if len(list.Topics) != topics {
		t.Errorf("GET /topics lists %d topics, want %d", len(list.Topics), topics)
	}
}
