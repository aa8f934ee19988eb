package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/syncverse/hub/internal/rig"
)

// limits.connection_rate holds for streams behind a trusted proxy too: its connections are exempt from the
// connection-level pace (they carry many clients), so the stream's admission takes from the rate of the client
// address X-Forwarded-For names. Past its burst one client is refused with 429 and Retry-After; another is not.
func TestStreamAdmissionTakesFromTheConnectionRate(t *testing.T) {
	rs := rig.StartRedis(t)
	h := newEdge(t, rs, "HUB_LIMITS_CONNECTION_RATE=0.01", "HUB_LIMITS_CONNECTION_BURST=3",
		"HUB_LIMITS_TRUSTED_PROXIES=127.0.0.1")
	open := func(client string) *rig.Stream {
		c := rig.OpenStreamWith(t, h.URL, rig.TopicQuery("paced"), http.Header{"X-Forwarded-For": {client}})
		c.Close()
		return c
	}
	for i := range 3 {
		if c := open("198.51.100.7"); c.Status != http.StatusOK {
			t.Fatalf("stream %d of a burst of 3 = %d %s, want 200", i+1, c.Status, c.Body)
		}
	}
	c := open("198.51.100.7")
	if msg := jsonError(c.Body); c.Status != http.StatusTooManyRequests ||
		!strings.Contains(msg, "too many new connections and streams from your address") || c.Header.Get("Retry-After") == "" {
		t.Errorf("fourth stream in a burst of 3 = %d %q (Retry-After %q), want 429 naming the rate, with Retry-After",
			c.Status, c.Body, c.Header.Get("Retry-After"))
	}
	if c := open("198.51.100.8"); c.Status != http.StatusOK {
		t.Errorf("another client's stream = %d %s, want 200: the rate is per address", c.Status, c.Body)
	}
	if v, _ := rig.MetricValue(rig.Scrape(t, h.URL), "hub_http_rejected_total", "reason=conn_rate"); v != 1 {
		t.Errorf("hub_http_rejected_total{reason=conn_rate} = %v, want 1", v)
	}
}
