package rig

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/internal/keyslot"
)

// Cluster is a Redis Cluster of real redis-server processes on loopback, owned by one test.
type Cluster struct {
	Nodes []*Redis // the first masters are the masters at creation, then their replicas
	t     TB
}

// StartCluster creates a cluster of masters, each with replicas replicas, and waits until every node reports
// cluster_state:ok. A node's failure is detected after nodeTimeout (cluster-node-timeout); args are more
// redis-server arguments for every node. It needs redis-server and redis-cli (it skips without, and fails when CI
// is set).
func StartCluster(t TB, masters, replicas int, nodeTimeout time.Duration, args ...string) *Cluster {
	t.Helper()
	needTools(t, "redis-server", "redis-cli")
	c := &Cluster{t: t}
	for range masters * (1 + replicas) {
		c.Nodes = append(c.Nodes, StartRedisWith(t, RedisOptions{ClusterBus: true, Args: append([]string{"--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf", "--cluster-node-timeout", strconv.FormatInt(nodeTimeout.Milliseconds(), 10),
			"--repl-diskless-sync-delay", "0"}, args...)}))
	}
	create := append([]string{"--cluster", "create"}, c.Addrs()...)
	create = append(create, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	if out, err := exec.Command("redis-cli", create...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli %s: %v\n%s", strings.Join(create, " "), err, out)
	}
	c.WaitOK(30 * time.Second)
	return c
}

// Addrs are the nodes' addresses.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n.Addr
	}
	return out
}

// URL is the hub's redis.url for the cluster.
func (c *Cluster) URL() string { return "redis+cluster://" + strings.Join(c.Addrs(), ",") }

// WaitOK waits until every running node says cluster_state:ok and knows every node, and every replica's link to
// its master is up.
func (c *Cluster) WaitOK(within time.Duration) {
	c.t.Helper()
	ctx := context.Background()
	err := PollWhy(ctx, within, 50*time.Millisecond, "every cluster node ok", func() (bool, string) {
		for _, n := range c.Nodes {
			if !n.Running() {
				continue
			}
			cl := redis.NewClient(&redis.Options{Addr: n.Addr})
			info, err := cl.ClusterInfo(ctx).Result()
			repl, err2 := cl.Info(ctx, "replication").Result()
			_ = cl.Close()
			if err != nil || err2 != nil || !strings.Contains(info, "cluster_state:ok") ||
				!strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d", len(c.Nodes))) ||
				!strings.Contains(repl, "role:master") && !strings.Contains(repl, "master_link_status:up") {
				return false, fmt.Sprintf("node %s: %v %v\n%s", n.Addr, err, err2, info)
			}
		}
		return true, ""
	})
	if err != nil {
		c.t.Fatalf("%v", err)
	}
}

// MasterOf returns the running node that a running node names as master of key's slot now, and a running replica
// of it; nil when none is known (as during a failover).
func (c *Cluster) MasterOf(key string) (master, replica *Redis) { return c.masterOfSlot(Slot(key)) }

func (c *Cluster) byAddr(addr string) *Redis {
	for _, n := range c.Nodes {
		if n.Addr == addr {
			return n
		}
	}
	return nil
}

// Slot is the Redis Cluster slot of key.
func Slot(key string) int { return keyslot.Of(key) }

func needTools(t TB, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s not installed; this test needs it", n)
			}
			t.Skipf("%s not installed; skipping", n)
		}
	}
}

// Masters returns the running nodes that serve slots now, in node order.
func (c *Cluster) Masters() []*Redis {
	var out []*Redis
	for _, n := range c.Nodes {
		if !n.Running() {
			continue
		}
		cl := redis.NewClient(&redis.Options{Addr: n.Addr})
		info, err := cl.Info(context.Background(), "replication").Result()
		_ = cl.Close()
		if err == nil && strings.Contains(info, "role:master") {
			out = append(out, n)
		}
	}
	return out
}

// MigrateSlot moves slot from its master to the master to, keys and all, by hand as redis-cli --cluster reshard
// does: SETSLOT IMPORTING on the target, MIGRATING on the source, MIGRATE of every key in batches, then SETSLOT
// NODE on both and on every other master. Clients meanwhile get ASK and TRYAGAIN, which they retry.
func (c *Cluster) MigrateSlot(ctx context.Context, slot int, to *Redis) error {
	return c.MigrateSlotSlowly(ctx, slot, to, 0)
}

// MigrateSlotSlowly is MigrateSlot of a busy slot: the slot stays MIGRATING on its master and IMPORTING on to for
// hold before its keys move, as a slot with many or large keys does while MIGRATE copies them. A command that names
// both a key still at the source and one that is not (a new key beside an existing one) is answered TRYAGAIN
// throughout.
func (c *Cluster) MigrateSlotSlowly(ctx context.Context, slot int, to *Redis, hold time.Duration) error {
	from, _ := c.masterOfSlot(slot)
	if from == nil {
		return fmt.Errorf("slot %d has no running master", slot)
	}
	if from == to {
		return fmt.Errorf("slot %d is on %s already", slot, to.Addr)
	}
	src, dst := redis.NewClient(&redis.Options{Addr: from.Addr}), redis.NewClient(&redis.Options{Addr: to.Addr})
	defer src.Close()
	defer dst.Close()
	srcID, err := src.Do(ctx, "CLUSTER", "MYID").Text()
	if err != nil {
		return fmt.Errorf("CLUSTER MYID on %s: %w", from.Addr, err)
	}
	dstID, err := dst.Do(ctx, "CLUSTER", "MYID").Text()
	if err != nil {
		return fmt.Errorf("CLUSTER MYID on %s: %w", to.Addr, err)
	}
	if err := dst.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", srcID).Err(); err != nil {
		return fmt.Errorf("SETSLOT IMPORTING on %s: %w", to.Addr, err)
	}
	if err := src.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", dstID).Err(); err != nil {
		return fmt.Errorf("SETSLOT MIGRATING on %s: %w", from.Addr, err)
	}
	select {
	case <-time.After(hold):
	case <-ctx.Done():
		return ctx.Err()
	}
	host, port, _ := strings.Cut(to.Addr, ":")
	for range 10000 {
		keys, err := src.ClusterGetKeysInSlot(ctx, slot, 100).Result()
		if err != nil {
			return fmt.Errorf("GETKEYSINSLOT on %s: %w", from.Addr, err)
		}
		if len(keys) == 0 {
			break
		}
		args := []any{"MIGRATE", host, port, "", 0, 5000, "KEYS"}
		for _, k := range keys {
			args = append(args, k)
		}
		if err := src.Do(ctx, args...).Err(); err != nil {
			return fmt.Errorf("MIGRATE %d keys to %s: %w", len(keys), to.Addr, err)
		}
	}
	// The target first, then the source, as redis-cli does, so the slot is never without an owner.
	for _, n := range append([]*Redis{to, from}, c.Masters()...) {
		cl := redis.NewClient(&redis.Options{Addr: n.Addr})
		err := cl.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", dstID).Err()
		_ = cl.Close()
		if err != nil {
			return fmt.Errorf("SETSLOT NODE on %s: %w", n.Addr, err)
		}
	}
	return nil
}

// masterOfSlot is MasterOf for a slot number.
func (c *Cluster) masterOfSlot(slot int) (master, replica *Redis) {
	ctx := context.Background()
	for _, n := range c.Nodes {
		if !n.Running() {
			continue
		}
		cl := redis.NewClient(&redis.Options{Addr: n.Addr})
		m, reps, ok := SlotOwner(ctx, cl, slot)
		_ = cl.Close()
		if !ok {
			continue
		}
		master = c.byAddr(m)
		for _, r := range reps {
			if rep := c.byAddr(r); rep != nil && rep.Running() {
				replica = rep
			}
		}
		if master != nil && master.Running() {
			return master, replica
		}
	}
	return nil, nil
}

// SlotOwner is what the node behind rdb says of slot now (CLUSTER SLOTS): its master's address and its replicas'.
// ok is false when the node does not answer or names no owner.
func SlotOwner(ctx context.Context, rdb *redis.Client, slot int) (master string, replicas []string, ok bool) {
	shards, err := rdb.ClusterSlots(ctx).Result()
	if err != nil {
		return "", nil, false
	}
	for _, s := range shards {
		if slot < s.Start || slot > s.End || len(s.Nodes) == 0 {
			continue
		}
		for _, r := range s.Nodes[1:] {
			replicas = append(replicas, r.Addr)
		}
		return s.Nodes[0].Addr, replicas, true
	}
	return "", nil, false
}
