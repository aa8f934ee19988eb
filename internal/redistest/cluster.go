package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a Redis Cluster of real redis-server processes on loopback, owned by one test.
type Cluster struct {
	Nodes []*Server // the first masters are the masters at creation, then their replicas
	t     testing.TB
}

// StartCluster creates a cluster of masters, each with replicas replicas, and waits until every node reports
// cluster_state:ok. A node's failure is detected after nodeTimeout (cluster-node-timeout). It needs redis-server
// and redis-cli (it skips without, and fails when CI is set).
func StartCluster(t testing.TB, masters, replicas int, nodeTimeout time.Duration) *Cluster {
	t.Helper()
	needTools(t, "redis-server", "redis-cli")
	c := &Cluster{t: t}
	for range masters * (1 + replicas) {
		c.Nodes = append(c.Nodes, StartReal(t, Options{ClusterBus: true, Args: []string{"--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf", "--cluster-node-timeout", strconv.FormatInt(nodeTimeout.Milliseconds(), 10),
			"--repl-diskless-sync-delay", "0"}}))
	}
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	if out, err := exec.Command("redis-cli", args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli %s: %v\n%s", strings.Join(args, " "), err, out)
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
	deadline := time.Now().Add(within)
	for _, n := range c.Nodes {
		if !n.Running() {
			continue
		}
		cl := redis.NewClient(&redis.Options{Addr: n.Addr})
		for {
			info, err := cl.ClusterInfo(ctx).Result()
			repl, err2 := cl.Info(ctx, "replication").Result()
			if err == nil && err2 == nil && strings.Contains(info, "cluster_state:ok") &&
				strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d", len(c.Nodes))) &&
				(strings.Contains(repl, "role:master") || strings.Contains(repl, "master_link_status:up")) {
				break
			}
			if time.Now().After(deadline) {
				_ = cl.Close()
				c.t.Fatalf("cluster node %s not ok within %v: %v %v\n%s", n.Addr, within, err, err2, info)
			}
			time.Sleep(50 * time.Millisecond)
		}
		_ = cl.Close()
	}
}

// MasterOf returns the running node that a running node names as master of key's slot now, and a running replica
// of it; nil when none is known (as during a failover).
func (c *Cluster) MasterOf(key string) (master, replica *Server) {
	ctx := context.Background()
	slot := Slot(key)
	for _, n := range c.Nodes {
		if !n.Running() {
			continue
		}
		cl := redis.NewClient(&redis.Options{Addr: n.Addr})
		shards, err := cl.ClusterSlots(ctx).Result()
		_ = cl.Close()
		if err != nil {
			continue
		}
		for _, s := range shards {
			if slot < s.Start || slot > s.End || len(s.Nodes) == 0 {
				continue
			}
			master = c.byAddr(s.Nodes[0].Addr)
			for _, r := range s.Nodes[1:] {
				if rep := c.byAddr(r.Addr); rep != nil && rep.Running() {
					replica = rep
				}
			}
			if master != nil && master.Running() {
				return master, replica
			}
		}
	}
	return nil, nil
}

func (c *Cluster) byAddr(addr string) *Server {
	for _, n := range c.Nodes {
		if n.Addr == addr {
			return n
		}
	}
	return nil
}

// Slot is the Redis Cluster slot of key (CRC16 of its hash tag, mod 16384).
func Slot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc % 16384)
}

// Sentinel is a master, its replica and one sentinel (quorum 1) watching them as "hubmaster", all real processes.
type Sentinel struct {
	Master, Replica *Server
	Addr            string // the sentinel's
	t               testing.TB
}

// StartSentinel starts the three and waits until the sentinel knows the replica. The master is declared down after
// downAfter.
func StartSentinel(t testing.TB, downAfter time.Duration) *Sentinel {
	t.Helper()
	needTools(t, "redis-server")
	master := StartReal(t, Options{Args: []string{"--repl-diskless-sync-delay", "0"}})
	host, port, _ := net.SplitHostPort(master.Addr)
	replica := StartReal(t, Options{Args: []string{"--replicaof", host, port, "--repl-diskless-sync-delay", "0"}})
	s := &Sentinel{Master: master, Replica: replica, Addr: freeAddr(t), t: t}
	dir := t.TempDir()
	_, sport, _ := net.SplitHostPort(s.Addr)
	conf := fmt.Sprintf("port %s\nbind 127.0.0.1\ndir %s\nsentinel monitor hubmaster %s %s 1\n"+
		"sentinel down-after-milliseconds hubmaster %d\nsentinel failover-timeout hubmaster 10000\n",
		sport, dir, host, port, downAfter.Milliseconds())
	path := filepath.Join(dir, "sentinel.conf") // sentinel rewrites it, so it lives in the test's directory
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("redis-server", path, "--sentinel")
	if err := cmd.Start(); err != nil {
		t.Fatalf("start sentinel: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	sc := redis.NewSentinelClient(&redis.Options{Addr: s.Addr})
	defer sc.Close()
	deadline := time.Now().Add(15 * time.Second)
	for {
		r, err := sc.Replicas(context.Background(), "hubmaster").Result()
		if err == nil && len(r) == 1 {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("sentinel on %s does not see the replica: %v %v", s.Addr, r, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// URL is the hub's redis.url for the sentinel's master.
func (s *Sentinel) URL() string { return "redis+sentinel://" + s.Addr + "/hubmaster/0" }

// CurrentMaster is the address the sentinel gives for the master now.
func (s *Sentinel) CurrentMaster() string {
	sc := redis.NewSentinelClient(&redis.Options{Addr: s.Addr})
	defer sc.Close()
	a, err := sc.GetMasterAddrByName(context.Background(), "hubmaster").Result()
	if err != nil || len(a) != 2 {
		return ""
	}
	return net.JoinHostPort(a[0], a[1])
}

// ByAddr returns the master or the replica by address.
func (s *Sentinel) ByAddr(addr string) *Server {
	if s.Replica.Addr == addr {
		return s.Replica
	}
	return s.Master
}

func needTools(t testing.TB, names ...string) {
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
