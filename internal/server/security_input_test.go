package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/syncverse/hub/internal/rig"
)

// Hostile input: CR, LF and NUL in topic, type and cursor, oversized cursors and topic lists. Each is refused
// with a clear error before anything is stored or subscribed.
func TestHostileInput(t *testing.T) {
	rs := rig.StartRedis(t)
	h, admin := secureEdge(t, rs)
	auth := bearer(admin)
	pub := func(topic, typ string) call {
		return call{method: "POST", path: "/publish", header: auth, body: eventJSON(topic, typ)}
	}
	with := func(c call, name string, status int, errHas string) call {
		c.name, c.status, c.errHas = name, status, errHas
		return c
	}
	cursor := func(raw string) string { return "/events?topic=in&last_event_id=" + url.QueryEscape(raw) }
	check(t, h.URL, []call{
		{name: "CR LF in topic", path: "/events?topic=" + url.QueryEscape("in\r\nevent: x"), header: auth, status: 400, errHas: "invalid topic"},
		{name: "NUL in topic", path: "/events?topic=in%00", header: auth, status: 400, errHas: "invalid topic"},
		{name: "a pattern as a topic", path: "/events?topic=in.*", header: auth, status: 400, errHas: "invalid topic"},
		{name: "CR LF in the cursor", path: cursor("1-0\r\nevent: x"), header: auth, status: 400, errHas: "invalid Last-Event-ID"},
		{name: "NUL in the cursor", path: cursor("1-0\x00"), header: auth, status: 400, errHas: "invalid Last-Event-ID"},
		{name: "CR LF in a multi-topic cursor", path: "/events?topic=in&topic=in2&last_event_id=" + url.QueryEscape("in=1-0\n;in2=1-0"), header: auth, status: 400, errHas: "invalid Last-Event-ID"},
		{name: "cursor over limits.max_cursor_bytes", path: "/events?topic=in", header: http.Header{"Authorization": auth["Authorization"], "Last-Event-Id": {strings.Repeat("1", 12<<10)}}, status: 400, errHas: "longer than 8192 bytes"},
		{name: "33 topics", path: "/events?" + manyTopics(33), header: auth, status: 400, errHas: "too many topics: 33, at most 32"},
		with(pub("in\r\nx", "progress"), "CR LF in a published topic", 400, "invalid topic"),
		with(pub("in\x00", "progress"), "NUL in a published topic", 400, "invalid topic"),
		with(pub("in", "progress\r\nevent: x"), "CR LF in a published type", 400, "invalid event type"),
		with(pub("in", "progress\x00"), "NUL in a published type", 400, "invalid event type"),
		{name: "CR LF in a history cursor", path: "/topics/in/history?after=" + url.QueryEscape("1-0\r\n"), header: auth, status: 400, errHas: "after"},
		{name: "NUL in a history topic", path: "/topics/in%00/history", header: auth, status: 400, errHas: "invalid topic"},
		{name: "history page over the limit", path: "/topics/in/history?limit=1001", header: auth, status: 400, errHas: "limit must be 1..1000"},
	}, quiet(h, admin, "in", "in2"))

	// What net/http refuses before the hub sees the request answers in plain text: assert exactly that.
	raw := []struct {
		name, request string
		status        int
		body          string
	}{
		{"10,000 topics: a 120 KB request line", "GET /events?" + manyTopics(10000) + " HTTP/1.1\r\nHost: h\r\n\r\n", 431, "431 Request Header Fields Too Large"},
		{"1 MiB Last-Event-ID", "GET /events?topic=in HTTP/1.1\r\nHost: h\r\nLast-Event-ID: " + strings.Repeat("1", 1<<20) + "\r\n\r\n", 431, "431 Request Header Fields Too Large"},
		{"NUL in the Last-Event-ID header", "GET /events?topic=in HTTP/1.1\r\nHost: h\r\nLast-Event-ID: 1-0\x00\r\n\r\n", 400, "400 Bad Request"},
		{"bare CR in the Last-Event-ID header", "GET /events?topic=in HTTP/1.1\r\nHost: h\r\nLast-Event-ID: 1-0\revent: x\r\n\r\n", 400, "400 Bad Request"},
	}
	for _, r := range raw {
		status, body := rig.RawRequest(t, h.Addr, r.request)
		if status != r.status || body != r.body {
			t.Errorf("%s = %d %q, want %d %q", r.name, status, body, r.status, r.body)
		}
		quiet(h, admin, "in")(t)
	}
}

// With a header limit large enough to carry them, 10,000 topics reach the handler and get its JSON refusal.
func TestTenThousandTopics(t *testing.T) {
	rs := rig.StartRedis(t)
	h, admin := secureEdge(t, rs, "HUB_LIMITS_MAX_HEADER_BYTES=1048576")
	check(t, h.URL, []call{
		{name: "10,000 topics", path: "/events?" + manyTopics(10000), header: bearer(admin), status: 400, errHas: "too many topics: 10000, at most 32"},
	}, quiet(h, admin, "t0", "t9999"))
}

func manyTopics(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte('&')
		}
		fmt.Fprintf(&b, "topic=t%d", i)
	}
	return b.String()
}
