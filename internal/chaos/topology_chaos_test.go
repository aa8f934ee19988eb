//go:build slow

package chaos

import (
	"testing"
	"time"

	"github.com/syncverse/hub/internal/redistest"
)

// Scenario 13 is scenario 11 with classic pub/sub (PUBLISH, broadcast to every node): the same three faults, the
// same promise.
func TestChaos13PublishThroughClusterFaultsClassicPubSub(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos scenarios run real processes; skipped with -short")
	}
	runClusterFaults(t, "s13", false)
}

// Scenario 14: three sentinels (quorum 2) with their own password, a master and a replica with another, and the
// master SIGKILLed under load. The hubs follow the promotion through the authenticated sentinels.
func TestChaos14SentinelsWithPasswordsMasterKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos scenarios run real processes; skipped with -short")
	}
	s := redistest.StartSentinelWith(t, redistest.SentinelOptions{
		Sentinels: 3, Password: "redis-pw", SentinelPassword: "sentinel-pw", DownAfter: time.Second,
	})
	r := newFailoverRig(t, s.URL())
	scraped := r.run(topicNames("s14", 6), fault{"SIGKILL of the master", func() {
		if err := redistest.WaitInSync(s.Replica.Addr, "redis-pw", 30*time.Second); err != nil {
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
