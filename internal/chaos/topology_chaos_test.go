//go:build slow

package chaos

import (
	"testing"
	"time"

	"github.com/syncverse/hub/internal/rig"
)

// Scenario 13 is scenario 11 with classic pub/sub (PUBLISH, broadcast to every node): the same three faults, the
// same promise.
func TestChaos13PublishThroughClusterFaultsClassicPubSub(t *testing.T) {
	runClusterFaults(t, "s13", false)
}

// Scenario 14: three sentinels (quorum 2) with their own password, a master and a replica with another, and the
// master SIGKILLed under load. The hubs follow the promotion through the authenticated sentinels.
func TestChaos14SentinelsWithPasswordsMasterKilled(t *testing.T) {
	s, r := newSentinelRig(t, rig.SentinelOptions{
		Sentinels: 3, Password: "redis-pw", SentinelPassword: "sentinel-pw", DownAfter: time.Second,
	})
	scraped := r.run(topicNames("s14", 6), fault{"SIGKILL of the master", func() {
		if err := rig.WaitInSync(s.Replica.Addr, "redis-pw", 30*time.Second); err != nil {
			t.Fatal(err) // a replica behind its master would lose what the master acknowledged
		}
		s.Master.Kill()
		r.poll("the sentinels promote "+s.Replica.Addr, func() bool { return s.CurrentMaster() == s.Replica.Addr })
	}})
	retriedOK, errs := 0.0, 0.0
	for _, m := range scraped {
		retriedOK += m[`hub_publish_retried_total{outcome="ok"}`]
		errs += m["hub_redis_receive_errors_total"]
	}
	// Every hub's pub/sub connection was on the killed master; every publish during the election was retried.
	if retriedOK < 1 || errs < float64(len(scraped)) {
		t.Errorf(`after the master kill: hub_publish_retried_total{outcome="ok"} = %v, hub_redis_receive_errors_total = %v summed over %d hubs; want >= 1 and >= one per hub`,
			retriedOK, errs, len(scraped))
	}
}

// Scenario 15: the replica replicates through a link that holds every byte for 200 ms, and the master is SIGKILLed
// with the link cut, as when a master's machine dies with what it had not yet sent: the events it acknowledged in
// its last 200 ms are gone. What was stored still reaches every client exactly once and in order, and a client
// resuming from a vanished id gets every stored event after it.
func TestChaos15SentinelFailoverLosesAcknowledgedEvents(t *testing.T) {
	var link *rig.Link
	s, r := newSentinelRig(t, rig.SentinelOptions{DownAfter: time.Second, ReplicaOf: func(master string) string {
		link = rig.StartLink(t, master, 200*time.Millisecond)
		return link.Addr
	}})
	r.lossy = true
	r.run(topicNames("s15", 6), fault{"SIGKILL of the master, replica 200 ms behind", func() {
		link.Cut()
		s.Master.Kill()
		r.poll("the sentinel promotes "+s.Replica.Addr, func() bool { return s.CurrentMaster() == s.Replica.Addr })
	}})
}
