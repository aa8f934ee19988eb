package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/rig"
)

// largestCursor is the largest stream id there is: nothing can follow it.
const largestCursor = "18446744073709551615-18446744073709551615"

// TestLargestCursorIsHistoryLost (#14 item 13): a stream resumed from the largest id gets a history-lost reset and
// then live events, instead of retrying a read Redis refuses forever; /history after it is a 400 that says so,
// not a 503 with Redis's error text.
func TestLargestCursorIsHistoryLost(t *testing.T) {
	rs := rig.StartRedis(t)
	h := hubtest.Start(t, rs)
	publishN(t, h, "big", 1, 3)

	resp, err := http.Get(h.URL + "/topics/big/history?after=" + largestCursor)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "history-lost") || strings.Contains(string(body), "ERR") {
		t.Errorf("GET /history?after=%s = %d %s, want 400 naming history-lost and no Redis error", largestCursor, resp.StatusCode, body)
	}

	c := rig.OpenStream(t, h.URL, rig.TopicQuery("big"), largestCursor)
	defer c.Close()
	if f := c.NextEvent(5 * time.Second); f.Event != "reset" || !strings.Contains(f.Data, `"history-lost"`) {
		t.Fatalf("resume from %s: first event %s %s, want a history-lost reset", largestCursor, f.Event, f.Data)
	}
	id := h.Publish("big", "progress", hubtest.EventData(4))
	if f := c.NextEvent(5 * time.Second); f.ID != id {
		t.Errorf("after the reset: event %q %s, want the live event %s", f.ID, f.Data, id)
	}
}

// TestSnapshotResponseBounded (#14 item 8): a state larger than limits.max_snapshot_bytes is answered with as much
// of it as fits, marked truncated, and counted; each workflow it does hold is whole and consistent with the cursor.
func TestSnapshotResponseBounded(t *testing.T) {
	rs := rig.StartRedis(t)
	h := hubtest.Start(t, rs, "HUB_LIMITS_MAX_SNAPSHOT_BYTES=65536")
	pad := strings.Repeat("x", 8<<10)
	for i := range 40 {
		h.Publish("snap", "progress", fmt.Sprintf(`{"workflow":"wf-%d","pad":"%s"}`, i, pad))
	}
	resp, err := http.Get(h.URL + "/topics/snap/snapshot")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var snap struct {
		Cursor    string                     `json:"cursor"`
		Workflows map[string]json.RawMessage `json:"workflows"`
		Truncated bool                       `json:"truncated"`
	}
	if err := json.Unmarshal(body, &snap); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /snapshot = %d, %v", resp.StatusCode, err)
	}
	if !snap.Truncated || len(body) > 80<<10 || len(snap.Workflows) == 0 {
		t.Errorf("GET /snapshot of 40 workflows of 8 KB with a 64 KB bound = %d bytes, %d workflows, truncated %v; want at most about 64 KB, truncated",
			len(body), len(snap.Workflows), snap.Truncated)
	}
	if v, _ := rig.MetricValue(rig.Scrape(t, h.URL), "hub_redis_snapshots_truncated_total"); v != 1 {
		t.Errorf("hub_redis_snapshots_truncated_total = %v, want 1", v)
	}
}
