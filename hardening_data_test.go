package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/internal/redistest"
)

// largestCursor is the largest stream id there is: nothing can follow it.
const largestCursor = "18446744073709551615-18446744073709551615"

// TestLargestCursorIsHistoryLost (#14 item 13): a stream resumed from the largest id gets a history-lost reset and
// then live events, instead of retrying a read Redis refuses forever; /history after it is a 400 that says so,
// not a 503 with Redis's error text.
func TestLargestCursorIsHistoryLost(t *testing.T) {
	rs := redistest.Start(t)
	h := startHub(t, rs)
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

	c := openSSE(t, h.URL, topicQuery("big"), largestCursor)
	defer c.Close()
	if f := c.nextEvent(5 * time.Second); f.Event != "reset" || !strings.Contains(f.Data, `"history-lost"`) {
		t.Fatalf("resume from %s: first event %s %s, want a history-lost reset", largestCursor, f.Event, f.Data)
	}
	id := h.publish("big", "progress", data(4))
	if f := c.nextEvent(5 * time.Second); f.ID != id {
		t.Errorf("after the reset: event %q %s, want the live event %s", f.ID, f.Data, id)
	}
}
