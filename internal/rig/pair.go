package rig

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// StartRedisPair starts a master and a replica of it (real servers) and waits until the replica is in sync.
func StartRedisPair(t TB) (master, replica *Redis) {
	t.Helper()
	master = StartRedisWith(t, RedisOptions{Args: []string{"--repl-diskless-sync-delay", "0"}})
	host, port, _ := net.SplitHostPort(master.Addr)
	replica = StartRedisWith(t, RedisOptions{Args: []string{"--replicaof", host, port, "--repl-diskless-sync-delay", "0"}})
	if err := WaitInSync(replica.Addr, "", 15*time.Second); err != nil {
		t.Fatalf("%v", err)
	}
	return master, replica
}

// WaitInSync waits until the server at addr is a replica whose link to its master is up and whose sync is done.
func WaitInSync(addr, password string, within time.Duration) error {
	c := redis.NewClient(&redis.Options{Addr: addr, Password: password})
	defer c.Close()
	return PollWhy(context.Background(), within, 20*time.Millisecond, "replica "+addr+" in sync", func() (bool, string) {
		v, err := c.Info(context.Background(), "replication").Result()
		return err == nil && strings.Contains(v, "role:slave") && strings.Contains(v, "master_link_status:up") &&
			strings.Contains(v, "master_sync_in_progress:0"), fmt.Sprintf("%v %s", err, strings.TrimSpace(v))
	})
}
