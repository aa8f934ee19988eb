package bench

import (
	"testing"
	"time"
)

// TestReplayHogBoundsMemory is issue #14's replay attack: 16 clients resume a topic of 1,000 events of 60 KB from
// early positions and never read. The hub (the real binary, built without -race, on a real redis-server) must grow
// by less than 256 MiB, and one more client that reads must still get every event.
func TestReplayHogBoundsMemory(t *testing.T) {
	bin := scenarioHub(t, "builds the hub and moves 60 MB through it")
	var res Result
	_, err := runJSON(t, 2*time.Minute, []string{"--scenario", "replay-hog", "--hub-bin", bin, "--json"}, &res,
		func() bool { return res.Proc != nil })
	growth := res.Proc.RSSAfterMiB - res.Proc.RSSBeforeMiB
	t.Logf("hub RSS %.1f MiB before, %.1f MiB at its peak (+%.1f MiB); reader: %+v",
		res.Proc.RSSBeforeMiB, res.Proc.RSSAfterMiB, growth, res.Check)
	if growth >= 256 {
		t.Errorf("16 resuming clients that do not read grew the hub by %.1f MiB, want < 256", growth)
	}
	if err != nil || !res.Check.ok() || res.Replayed != 1000 {
		t.Errorf("the reading client: %+v of %d events (err %v), want every event once, in order", res.Check, res.Replayed, err)
	}
}
