//go:build slow

package topology

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/redistest"
	"github.com/syncverse/hub/internal/ssetest"
	"github.com/syncverse/hub/internal/testutil"
	"github.com/syncverse/hub/pubsub"
)

// A hub on redis+sentinel:// follows a failover: the events before it are replayed from the promoted replica, the
// ones after it arrive live, each once and in order. Sentinel is redis-server in sentinel mode (redistest), so no
// other package is needed.
func TestRedisSentinelFailover(t *testing.T) {
	ctx := context.Background()
	rig := redistest.StartSentinel(t, time.Second)
	replica := rig.Replica.Addr
	sentinel := redis.NewSentinelClient(&redis.Options{Addr: rig.Addr})
	defer sentinel.Close()

	url := rig.URL()
	prefix := fmt.Sprintf("s%d", time.Now().UnixNano())
	h := hubtest.RunDeployed(t, map[string]string{"HUB_REDIS_URL": url, "HUB_REDIS_PREFIX": prefix, "HUB_REDIS_TAIL_CHECK": "1h"})
	rdb, err := pubsub.NewClient(url)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	pub := pubsub.NewPublisher(rdb, pubsub.PublisherConfig{Prefix: prefix})

	stream := ssetest.Open(t, h.URL, ssetest.TopicQuery("wf"), "0-0")
	for i := range 5 {
		if _, err := pub.Publish(ctx, "wf", "progress", []byte(hubtest.EventData(i))); err != nil {
			t.Fatalf("Publish(%d) = %v", i, err)
		}
	}
	if n, err := rdb.Do(ctx, "WAIT", 1, 2000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 = %d, %v: the replica did not acknowledge the events", n, err)
	}
	checkSeq(t, stream.Events(5, 10*time.Second), 0)

	rig.Master.Kill()
	testutil.Eventually(t, 20*time.Second, "sentinel promotes "+replica, func() bool {
		a, err := sentinel.GetMasterAddrByName(ctx, "hubmaster").Result()
		return err == nil && len(a) == 2 && a[0]+":"+a[1] == replica
	})
	for i := 5; i < 10; i++ {
		testutil.Eventually(t, 15*time.Second, fmt.Sprintf("Publish(%d) after the failover", i), func() bool {
			_, err := pub.Publish(ctx, "wf", "progress", []byte(hubtest.EventData(i)))
			return err == nil
		})
	}
	checkSeq(t, stream.Events(5, 20*time.Second), 5)
	h.WaitReady(10 * time.Second)
}

// checkSeq fails unless the frames carry data(from), data(from+1), … in order.
func checkSeq(t *testing.T, frames []ssetest.Frame, from int) {
	t.Helper()
	for i, f := range frames {
		if f.Data != hubtest.EventData(from+i) {
			t.Fatalf("event %d = %s, want %s", from+i, f.Data, hubtest.EventData(from+i))
		}
	}
}
