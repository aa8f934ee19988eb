package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/pubsub"
)

// runClusterFaults is scenarios 11 and 13: three hubs on a cluster of 3 masters with a replica each, topics on every
// master, and three faults under load: CLUSTER FAILOVER on the busy topic's replica, a SIGKILL of the master that
// took over (its old master takes the slots back), and the busy topic's slot migrated to another master, slowly.
// Under -short it skips the test.
func runClusterFaults(t *testing.T, name string, sharded bool) {
	skipShort(t)
	cluster := rig.StartCluster(t, 3, 1, time.Second)
	r := newFailoverRig(t, cluster.URL(), fmt.Sprintf("HUB_REDIS_SHARDED_PUBSUB=%v", sharded))
	topics := spreadTopics(t, cluster, r.keys, name, 2)
	busy, replica := cluster.MasterOf(r.keys.Stream(topics[0]))
	r.poll("a replica of "+topics[0]+"'s master is known", func() bool {
		busy, replica = cluster.MasterOf(r.keys.Stream(topics[0]))
		return replica != nil
	})
	scraped := r.run(topics, fault{"CLUSTER FAILOVER", func() {
		if err := replica.Client().Do(context.Background(), "CLUSTER", "FAILOVER").Err(); err != nil {
			t.Fatalf("CLUSTER FAILOVER on %s: %v", replica.Addr, err)
		}
		r.waitMaster(cluster, topics[0], replica, "the replica "+replica.Addr+" takes over from "+busy.Addr)
		r.waitInSync(busy)
	}}, fault{"SIGKILL of the master", func() {
		replica.Kill()
		r.waitMaster(cluster, topics[0], busy, "the first master "+busy.Addr+" takes its slots back")
	}}, fault{"slot migration", func() {
		var to *rig.Redis
		for _, m := range cluster.Masters() {
			if m != busy {
				to = m
			}
		}
		// A busy slot's migration: MIGRATING for 7 s before its keys move, longer than redis.publish_retry (5 s), so
		// keyed publishes answer 202 only because TRYAGAIN is retried for redis.migration_retry.
		slot := rig.Slot(r.keys.Stream(topics[0]))
		if err := cluster.MigrateSlotSlowly(context.Background(), slot, to, 7*time.Second); err != nil {
			t.Fatalf("migrate slot %d of %s from %s to %s: %v", slot, topics[0], busy.Addr, to.Addr, err)
		}
		r.waitMaster(cluster, topics[0], to, fmt.Sprintf("slot %d served by %s", slot, to.Addr))
	}})
	retriedOK := 0.0
	for i, m := range scraped {
		retriedOK += m[`hub_publish_retried_total{outcome="ok"}`]
		// With sharded pub/sub every hub holds a connection to the master that was killed (the busy topic was on
		// it, and every client follows it), and its slot then migrated: each hub must have subscribed again.
		if sharded && m["hub_redis_resubscriptions_total"] < 1 {
			t.Errorf("hub %d: hub_redis_resubscriptions_total = %v after a master kill and a migration, want >= 1",
				i, m["hub_redis_resubscriptions_total"])
		}
	}
	if retriedOK < 1 {
		t.Errorf(`hub_publish_retried_total{outcome="ok"} summed over the hubs = %v after a master kill under load, want >= 1`, retriedOK)
	}
}

// spreadTopics returns topic names, perMaster of them on each master of c's slots, the first one first.
func spreadTopics(t *testing.T, c *rig.Cluster, keys pubsub.Keys, prefix string, perMaster int) []string {
	t.Helper()
	masters := c.Masters()
	count := map[*rig.Redis]int{}
	var out []string
	for i := 0; i < 1000 && len(out) < perMaster*len(masters); i++ {
		name := fmt.Sprintf("%s.%d", prefix, i)
		m, _ := c.MasterOf(keys.Stream(name))
		if m != nil && count[m] < perMaster {
			count[m]++
			out = append(out, name)
		}
	}
	if len(out) < perMaster*len(masters) {
		t.Fatalf("spreadTopics: %d topics over %d masters, want %d each", len(out), len(masters), perMaster)
	}
	return out
}

// readiness samples every hub's /readyz until stopped, counting the answers other than 200.
type readiness struct {
	stopCh chan struct{}
	wg     sync.WaitGroup
	mu     sync.Mutex
	bad    []int
}

func watchReadiness(hubs []*rig.Hub) *readiness {
	r := &readiness{stopCh: make(chan struct{}), bad: make([]int, len(hubs))}
	r.wg.Go(func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-r.stopCh:
				return
			case <-tick.C:
			}
			for i, h := range hubs {
				if h.Ready() != http.StatusOK {
					r.mu.Lock()
					r.bad[i]++
					r.mu.Unlock()
				}
			}
		}
	})
	return r
}

// stop ends the sampling and returns the counts per hub.
func (r *readiness) stop() []int {
	close(r.stopCh)
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.bad...)
}

// checkPublisherOrder fails the test unless, at every client and on every topic, each publisher's events (its
// workflow) arrive with growing seq: what the publisher sent one after the other arrives in that order. It returns
// how many (client, topic, publisher) sequences it checked.
func checkPublisherOrder(t *testing.T, f *Fleet) int {
	t.Helper()
	checked, bad := 0, 0
	for i, c := range f.Clients {
		for _, topic := range c.Topics() {
			last := map[string]int{}
			for _, g := range c.Received(topic) {
				if g.Reset {
					continue
				}
				var d struct {
					Workflow string `json:"workflow"`
					Seq      int    `json:"seq"`
				}
				if err := json.Unmarshal(g.Data, &d); err != nil || d.Workflow == "" {
					t.Errorf("client %d topic %s event %s: data %q: %v", i, topic, g.ID, g.Data, err)
					continue
				}
				if prev, ok := last[d.Workflow]; ok && d.Seq <= prev {
					if bad++; bad <= 5 {
						t.Errorf("client %d topic %s: %s seq %d after seq %d, want growing", i, topic, d.Workflow, d.Seq, prev)
					}
				} else if !ok {
					checked++
				}
				last[d.Workflow] = d.Seq
			}
		}
	}
	return checked
}
