//go:build slow

package bench

import (
	"testing"
	"time"
)

// TestFleetChaos is the fleet scenario at CI size: 3 hub processes (the real binary, built without -race) on a
// Redis Cluster of 3 masters and 3 replicas started from redis-server, 3,000 streams from 2 load-generator
// processes on 100 topics, 200 events/s for 20 s, and during it a CLUSTER FAILOVER, a master SIGKILLed, a slot
// migrated and one hub restarted. Every client must have every stored event once and in order, every fault must
// have happened, and every stream must have been open.
func TestFleetChaos(t *testing.T) {
	bin := hubBinary(t, "redis-server", "redis-cli")
	args := []string{"--scenario", "fleet", "--hub-bin", bin, "--bench-bin", benchBinary(t), "--hubs", "3", "--loaders", "2", "--conns", "3000",
		"--topics", "100", "--rate", "200", "--duration", "20s", "--drain", "20s", "--hold", "3s", "--chaos", "--json"}
	var res FleetResult
	out, err := runJSON(t, 80*time.Second, args, &res, func() bool { return true })
	t.Logf("%s", out)
	if err != nil || !res.Check.ok() {
		t.Errorf("hub bench --scenario fleet --chaos = %v; check %+v, want every event once and in order at every client", err, res.Check)
	}
	if len(res.Faults) != 4 {
		t.Errorf("%d faults made, want 4 (failover, master kill, slot migration, hub restart): %+v", len(res.Faults), res.Faults)
	}
	for _, f := range res.Faults {
		if f.Error != "" {
			t.Errorf("fault %q failed: %s", f.Name, f.Error)
		}
	}
	held := 0
	for _, h := range res.PerHub {
		held += h.Streams
	}
	if held != 3000 || res.Check.Reconnects < 500 {
		t.Errorf("the hubs held %d streams, want 3000; %d reconnects, want at least the restarted hub's ~1,000", held, res.Check.Reconnects)
	}
	if res.Expected == 0 || res.Deliveries < int64(res.Expected) || res.Published < 2000 {
		t.Errorf("published %d, delivered %d of %d expected; want at least 2,000 published and every one delivered", res.Published, res.Deliveries, res.Expected)
	}
}
