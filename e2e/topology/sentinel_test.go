//go:build slow

package topology

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/pubsub"
)

// A hub on redis+sentinel:// follows a failover: the events before it are replayed from the promoted replica, the
// ones after it arrive live, each once and in order. Sentinel is redis-server in sentinel mode (internal/rig), so no
// other package is needed.
func TestRedisSentinelFailover(t *testing.T) {
	ctx := context.Background()
	sen := rig.StartSentinel(t, time.Second)
	replica := sen.Replica.Addr
	sentinel := redis.NewSentinelClient(&redis.Options{Addr: sen.Addr})
	defer sentinel.Close()

	url := sen.URL()
	prefix := fmt.Sprintf("s%d", time.Now().UnixNano())
	h := hubtest.RunDeployed(t, map[string]string{"HUB_REDIS_URL": url, "HUB_REDIS_PREFIX": prefix, "HUB_REDIS_TAIL_CHECK": "1h"})
	rdb, err := pubsub.NewClient(url)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	pub := pubsub.NewPublisher(rdb, pubsub.PublisherConfig{Prefix: prefix})

	stream := rig.OpenStream(t, h.URL, rig.TopicQuery("wf"), "0-0")
	for i := range 5 {
		if _, err := pub.Publish(ctx, "wf", "progress", []byte(hubtest.EventData(i))); err != nil {
			t.Fatalf("Publish(%d) = %v", i, err)
		}
	}
	if n, err := rdb.Do(ctx, "WAIT", 1, 2000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 = %d, %v: the replica did not acknowledge the events", n, err)
	}
	checkSeq(t, stream.Events(5, 10*time.Second), 0)

	sen.Master.Kill()
	rig.Eventually(t, 20*time.Second, "sentinel promotes "+replica, func() bool {
		a, err := sentinel.GetMasterAddrByName(ctx, "hubmaster").Result()
		return err == nil && len(a) == 2 && a[0]+":"+a[1] == replica
	})
	for i := 5; i < 10; i++ {
		rig.Eventually(t, 15*time.Second, fmt.Sprintf("Publish(%d) after the failover", i), func() bool {
			_, err := pub.Publish(ctx, "wf", "progress", []byte(hubtest.EventData(i)))
			return err == nil
		})
	}
	checkSeq(t, stream.Events(5, 20*time.Second), 5)
	h.WaitReady(10 * time.Second)
}

// checkSeq fails unless the frames carry data(from), data(from+1), … in order.
func checkSeq(t *testing.T, frames []rig.Frame, from int) {
	t.Helper()
	for i, f := range frames {
		if f.Data != hubtest.EventData(from+i) {
			t.Fatalf("event %d = %s, want %s", from+i, f.Data, hubtest.EventData(from+i))
		}
	}
}
