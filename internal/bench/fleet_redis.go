package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/syncverse/hub/internal/rig"
)

// redisNode is one node of the fleet's Redis Cluster: a redis-server started here (and so one that can be killed
// and started again on the same port and directory, where its nodes.conf keeps its identity), or a node of a
// cluster named by --redis-url, which can only be reached over the network.
type redisNode struct {
	addr string
	srv  *rig.Redis // nil for a node not started here
	rdb  *redis.Client
	down bool // killed and not started again (a node not started here)
}

// redisCluster is the fleet's Redis Cluster.
type redisCluster struct {
	nodes []*redisNode
	url   string     // the hubs' redis.url for the cluster: every node
	rigs  *rig.Owner // started here: stop ends the processes
}

// clusterNodeTimeout is cluster-node-timeout for a cluster started here: how long a killed master takes to be
// replaced is about twice this.
const clusterNodeTimeout = 2 * time.Second

// startCluster starts masters × (1 + replicas) redis-server processes (rig's Cluster rig) and joins them into
// a cluster.
func startCluster(masters, replicas int) (*redisCluster, error) {
	c := &redisCluster{rigs: &rig.Owner{}}
	var rc *rig.Cluster
	if err := c.rigs.Do(func() {
		rc = rig.StartCluster(c.rigs, masters, replicas, clusterNodeTimeout, "--maxclients", "10000")
	}); err != nil {
		c.stop()
		return nil, fmt.Errorf("start a Redis Cluster (or give --redis-url): %w", err)
	}
	for _, s := range rc.Nodes {
		c.nodes = append(c.nodes, &redisNode{addr: s.Addr, srv: s, rdb: newNodeClient(s.Addr)})
	}
	c.url = rc.URL()
	return c, nil
}

func newNodeClient(addr string) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr, DialTimeout: time.Second, ReadTimeout: 2 * time.Second, MaxRetries: -1})
}

// joinCluster finds every node of the cluster at url (redis+cluster://a,b,... or redis://a) from CLUSTER NODES.
func joinCluster(ctx context.Context, url string) (*redisCluster, error) {
	u := strings.TrimPrefix(strings.TrimPrefix(url, "redis+cluster://"), "redis://")
	seed, _, _ := strings.Cut(strings.Split(u, ",")[0], "/")
	rdb := redis.NewClient(&redis.Options{Addr: seed})
	defer rdb.Close()
	text, err := rdb.ClusterNodes(ctx).Result()
	if err != nil {
		return nil, fmt.Errorf("CLUSTER NODES on %s: %w", seed, err)
	}
	c := &redisCluster{}
	var addrs []string
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		addrs = append(addrs, addr)
		c.nodes = append(c.nodes, &redisNode{addr: addr, rdb: redis.NewClient(&redis.Options{Addr: addr})})
	}
	c.url = "redis+cluster://" + strings.Join(addrs, ",")
	return c, nil
}

// start starts a node started here again, on its port and directory, and waits until it answers.
func (n *redisNode) start() error { return n.srv.Start() }

// kill ends the node at once, as a crash would: SIGKILL of the process started here, or of the pid the node
// reports when it runs on this machine.
func (n *redisNode) kill(ctx context.Context) error {
	if n.srv != nil {
		n.srv.Kill()
		return nil
	}
	info, err := n.rdb.Info(ctx, "server").Result()
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(infoField(info, "process_id"))
	if err != nil || !strings.HasPrefix(n.addr, "127.") {
		return fmt.Errorf("node %s is not a local process this bench can kill", n.addr)
	}
	return syscall.Kill(pid, syscall.SIGKILL)
}

func (c *redisCluster) stop() {
	for _, n := range c.nodes {
		if n.rdb != nil {
			_ = n.rdb.Close()
		}
	}
	if c.rigs != nil {
		c.rigs.Close()
	}
}

// waitOK waits until every reachable node says cluster_state:ok and knows every node, and every replica's link
// to its master is up with no sync in progress.
func (c *redisCluster) waitOK(ctx context.Context, within time.Duration) error {
	return rig.Poll(ctx, within, pollEvery, "every node of the cluster ok and in sync", func() bool {
		for _, n := range c.nodes {
			if n.down {
				continue
			}
			info, err := n.rdb.ClusterInfo(ctx).Result()
			repl, err2 := n.rdb.Info(ctx, "replication").Result()
			if err != nil || err2 != nil || !strings.Contains(info, "cluster_state:ok") ||
				!strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d", len(c.nodes))) {
				return false
			}
			if infoField(repl, "role") == "slave" && (infoField(repl, "master_link_status") != "up" || infoField(repl, "master_sync_in_progress") != "0") {
				return false
			}
		}
		return true
	})
}

// owner returns the node that serves slot now, as the first reachable node tells it, and its reachable replicas.
func (c *redisCluster) owner(ctx context.Context, slot int) (master *redisNode, replicas []*redisNode) {
	for _, n := range c.nodes {
		m, reps, ok := rig.SlotOwner(ctx, n.rdb, slot)
		if !ok {
			continue
		}
		for _, r := range reps {
			if rn := c.byAddr(r); rn != nil {
				replicas = append(replicas, rn)
			}
		}
		return c.byAddr(m), replicas
	}
	return nil, nil
}

func (c *redisCluster) byAddr(addr string) *redisNode {
	for _, n := range c.nodes {
		if n.addr == addr {
			return n
		}
	}
	return nil
}

// role is what INFO replication says the node is: master, slave, or "" when it does not answer.
func (n *redisNode) role(ctx context.Context) string {
	repl, err := n.rdb.Info(ctx, "replication").Result()
	if err != nil {
		return ""
	}
	return infoField(repl, "role")
}

// infoField returns the value of key in an INFO reply.
func infoField(info, key string) string {
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// pollEvery is how often the bench asks whether what it waits for has happened.
const pollEvery = 50 * time.Millisecond
