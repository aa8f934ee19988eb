//go:build slow

package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/internal/ssetest"
	"github.com/syncverse/hub/internal/testutil"
	"github.com/syncverse/hub/pubsub"
)

// A hub on redis+sentinel:// follows a failover: the events before it are replayed from the promoted replica, the
// ones after it arrive live, each once and in order. Sentinel is redis-server in sentinel mode, so no other
// package is needed.
func TestRedisSentinelFailover(t *testing.T) {
	needTool(t, "redis-server")
	ctx := context.Background()
	dir := t.TempDir()
	node := func(name string, args ...string) (string, func()) {
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		port := freeBusPort(t)
		cmd := startProc(t, d, "redis-server", append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--dir", d, "--save", "", "--appendonly", "no", "--daemonize", "no"}, args...)...)
		a := loopback(port)
		c := redis.NewClient(&redis.Options{Addr: a})
		defer c.Close()
		testutil.Eventually(t, 5*time.Second, name+" answers PING", func() bool { return c.Ping(ctx).Err() == nil })
		return a, func() { _ = cmd.Process.Kill() }
	}
	master, killMaster := node("master", "--repl-diskless-sync-delay", "0")
	mhost, mport, _ := net.SplitHostPort(master)
	replica, _ := node("replica", "--replicaof", mhost, mport)
	rc := redis.NewClient(&redis.Options{Addr: replica})
	defer rc.Close()
	testutil.Eventually(t, 15*time.Second, "the replica is in sync", func() bool {
		info, err := rc.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "master_link_status:up")
	})

	sdir := filepath.Join(dir, "sentinel")
	if err := os.MkdirAll(sdir, 0o755); err != nil {
		t.Fatal(err)
	}
	sport := freeBusPort(t)
	conf := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor hubmaster %s %s 1\n"+
		"sentinel down-after-milliseconds hubmaster 1000\nsentinel failover-timeout hubmaster 10000\n", sport, sdir, mhost, mport)
	confPath := filepath.Join(sdir, "sentinel.conf") // sentinel rewrites it, so it lives in the test's directory
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	startProc(t, sdir, "redis-server", confPath, "--sentinel")
	sentinel := redis.NewSentinelClient(&redis.Options{Addr: loopback(sport)})
	defer sentinel.Close()
	testutil.Eventually(t, 10*time.Second, "sentinel sees the replica", func() bool {
		r, err := sentinel.Replicas(ctx, "hubmaster").Result()
		return err == nil && len(r) == 1
	})

	url := "redis+sentinel://" + loopback(sport) + "/hubmaster/0"
	prefix := fmt.Sprintf("s%d", time.Now().UnixNano())
	h := runDeployed(t, map[string]string{"HUB_REDIS_URL": url, "HUB_REDIS_PREFIX": prefix, "HUB_REDIS_TAIL_CHECK": "1h"})
	rdb, err := pubsub.NewClient(url)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	pub := pubsub.NewPublisher(rdb, pubsub.PublisherConfig{Prefix: prefix})

	stream := ssetest.Open(t, h.URL, ssetest.TopicQuery("wf"), "0-0")
	for i := range 5 {
		if _, err := pub.Publish(ctx, "wf", "progress", []byte(data(i))); err != nil {
			t.Fatalf("Publish(%d) = %v", i, err)
		}
	}
	if n, err := rdb.Do(ctx, "WAIT", 1, 2000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 = %d, %v: the replica did not acknowledge the events", n, err)
	}
	checkSeq(t, stream.Events(5, 10*time.Second), 0)

	killMaster()
	testutil.Eventually(t, 20*time.Second, "sentinel promotes "+replica, func() bool {
		a, err := sentinel.GetMasterAddrByName(ctx, "hubmaster").Result()
		return err == nil && len(a) == 2 && a[0]+":"+a[1] == replica
	})
	for i := 5; i < 10; i++ {
		testutil.Eventually(t, 15*time.Second, fmt.Sprintf("Publish(%d) after the failover", i), func() bool {
			_, err := pub.Publish(ctx, "wf", "progress", []byte(data(i)))
			return err == nil
		})
	}
	checkSeq(t, stream.Events(5, 20*time.Second), 5)
	h.waitReady(10 * time.Second)
}

// checkSeq fails unless the frames carry data(from), data(from+1), … in order.
func checkSeq(t *testing.T, frames []ssetest.Frame, from int) {
	t.Helper()
	for i, f := range frames {
		if f.Data != data(from+i) {
			t.Fatalf("event %d = %s, want %s", from+i, f.Data, data(from+i))
		}
	}
}
