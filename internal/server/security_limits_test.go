package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/auth"
	"github.com/syncverse/hub/internal/rig"
)

// One connection over each limit: per client address (X-Forwarded-For believed from the trusted proxy only, and
// only its right-most entry) and global. A refused request holds no slot and leaves no subscription.
func TestConnectionLimits(t *testing.T) {
	rs := rig.StartRedis(t)
	h := newEdge(t, rs, "HUB_LIMITS_MAX_CONNECTIONS=3", "HUB_LIMITS_MAX_CONNECTIONS_PER_IP=1", "HUB_LIMITS_TRUSTED_PROXIES=127.0.0.1")
	xff := func(v string) http.Header { return http.Header{"X-Forwarded-For": {v}} }
	open := func(hdr http.Header) *rig.Stream {
		return rig.OpenStreamWith(t, h.URL, rig.TopicQuery("limited"), hdr)
	}
	steps := []struct {
		name   string
		hdr    http.Header
		status int
		errHas string
	}{
		{"first client", xff("198.51.100.1"), 200, ""},
		{"first client again: over per-address", xff("198.51.100.1"), 429, "too many streams from your address (at most 1)"},
		{"spoofed left entry counts as the real client", xff("6.6.6.6, 198.51.100.1"), 429, "too many streams"},
		{"second client", xff("198.51.100.2"), 200, ""},
		{"the proxy itself", nil, 200, ""},
		{"fourth stream: over the global limit", xff("198.51.100.3"), 503, "connection limit (3 streams)"},
	}
	var held []*rig.Stream
	for _, s := range steps {
		c := open(s.hdr)
		if c.Status == http.StatusOK {
			held = append(held, c)
		}
		msg := jsonError(c.Body)
		if c.Status != s.status || !strings.Contains(msg, s.errHas) {
			t.Errorf("%s: GET /events = %d %q, want %d with %q", s.name, c.Status, c.Body, s.status, s.errHas)
		}
		if s.status >= 400 && c.Header.Get("Retry-After") == "" {
			t.Errorf("%s: %d without Retry-After", s.name, c.Status)
		}
	}
	fams := rig.Scrape(t, h.URL)
	for name, want := range map[string]float64{"hub_sse_connections_active": 3, "hub_subscriptions": 3} {
		if v, _ := rig.MetricValue(fams, name); v != want {
			t.Errorf("%s = %v with 3 streams held, want %v", name, v, want)
		}
	}
	rig.WantByLabel(t, fams, "hub_http_rejected_total", "reason", map[string]float64{"conn_per_ip": 2, "conn_limit": 1})
	for _, c := range held {
		c.Close()
	}
	rig.WaitZero(t, h.URL, "", "hub_subscriptions", "hub_sse_connections_active")
	if c := open(xff("198.51.100.1")); c.Status != http.StatusOK {
		t.Errorf("after the streams closed: GET /events = %d %s, want the slot back", c.Status, c.Body)
	}
}

// The publish rate per token (429 + Retry-After), the body limit (413), and CORS: preflight and writes from an
// origin not on the list are refused, a listed origin gets credentials.
func TestPublishAndOriginLimits(t *testing.T) {
	rs := rig.StartRedis(t)
	h, admin := secureEdge(t, rs, "HUB_LIMITS_PUBLISH_RATE=0.5", "HUB_LIMITS_PUBLISH_BURST=2",
		"HUB_CORS_ALLOWED_ORIGINS=https://console.example.com, https://ops.example.com")
	other := signToken(t, auth.Grant{Publish: []string{"rate"}}, time.Hour)
	sizer := signToken(t, auth.Grant{Publish: []string{"big"}}, time.Hour) // a bucket of its own: attempts count, not successes
	ok := call{method: "POST", path: "/publish", header: bearer(admin), body: eventJSON("rate", "progress"), status: 202}
	evil := http.Header{"Origin": {"https://evil.example"}, "Sec-Fetch-Site": {"cross-site"}, "Authorization": {"Bearer " + admin}}
	big := `{"topic":"big","type":"progress","data":{"pad":"` + strings.Repeat("x", 100<<10) + `"}}`
	bigEvent := `{"topic":"big","type":"progress","data":{"pad":"` + strings.Repeat("x", 70<<10) + `"}}`
	rows := []call{
		{name: "first in the burst", method: ok.method, path: ok.path, header: ok.header, body: ok.body, status: 202},
		{name: "second in the burst", method: ok.method, path: ok.path, header: ok.header, body: ok.body, status: 202},
		{name: "over the rate", method: ok.method, path: ok.path, header: ok.header, body: ok.body, status: 429, errHas: "publish rate over 0.5 events/s"},
		{name: "another token has its own bucket", method: "POST", path: "/publish", header: bearer(other), body: ok.body, status: 202},
		{name: "body over limits.max_body_bytes", method: "POST", path: "/publish", header: bearer(sizer), body: big, status: 413, errHas: "request body over"},
		{name: "event over limits.max_event_bytes", method: "POST", path: "/publish", header: bearer(sizer), body: bigEvent, status: 413, errHas: "too large"},
		{name: "preflight from an unlisted origin", method: "OPTIONS", path: "/publish", header: http.Header{"Origin": {"https://evil.example"}, "Access-Control-Request-Method": {"POST"}}, status: 403, errHas: "not in cors.allowed_origins"},
		{name: "cross-origin publish from an unlisted origin", method: "POST", path: "/publish", header: evil, body: eventJSON("cors", "progress"), status: 403, errHas: "https://evil.example"},
	}
	for _, c := range rows {
		r := do(t, h.URL, c)
		if r.status != c.status || !strings.Contains(r.msg, c.errHas) {
			t.Errorf("%s: %s %s = %d %q, want %d with %q", c.name, c.method, c.path, r.status, r.msg, c.status, c.errHas)
		}
		if r.status == 429 && r.header.Get("Retry-After") != "2" {
			t.Errorf("%s: Retry-After = %q, want 2 (one event every 2s)", c.name, r.header.Get("Retry-After"))
		}
		if r.status >= 400 && !r.isJSON {
			t.Errorf("%s: %d body %q, want JSON", c.name, r.status, r.msg)
		}
	}
	for topic, want := range map[string]int64{"rate": 3, "big": 0, "cors": 0} {
		if n := h.xlen(t, topic); n != want {
			t.Errorf("XLEN %s = %d, want %d", topic, n, want)
		}
	}
	r := do(t, h.URL, call{method: "OPTIONS", path: "/events", header: http.Header{"Origin": {"https://ops.example.com"}, "Access-Control-Request-Method": {"GET"}}})
	if r.status != http.StatusNoContent || r.header.Get("Access-Control-Allow-Origin") != "https://ops.example.com" ||
		r.header.Get("Access-Control-Allow-Credentials") != "true" || !strings.Contains(r.header.Get("Access-Control-Allow-Headers"), "Last-Event-ID") {
		t.Errorf("preflight from a listed origin = %d %v, want 204 with its origin and credentials", r.status, r.header)
	}
	r = do(t, h.URL, call{path: "/events?topic=cors", header: http.Header{"Origin": {"https://evil.example"}, "Authorization": {"Bearer " + admin}}})
	if r.header.Get("Access-Control-Allow-Origin") != "" || r.header.Get("Access-Control-Allow-Credentials") != "" {
		t.Errorf("GET /events from an unlisted origin carries CORS headers %v", r.header)
	}
	rig.WaitZero(t, h.URL, admin, "hub_subscriptions", "hub_sse_connections_active")
	fams := rig.ScrapeWith(t, h.URL, admin)
	rig.WantByLabel(t, fams, "hub_http_rejected_total", "reason", map[string]float64{"publish_rate": 1, "origin": 2})
}

// With metrics.listen, /metrics moves to its own listener (open, for the scraper) and leaves the main one.
func jsonError(body string) string {
	var e struct{ Error string }
	if jsonDecode(strings.NewReader(body), &e) != nil {
		return body
	}
	return e.Error
}
