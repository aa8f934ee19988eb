package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/syncverse/hub/internal/rig"
)

// A publish that breaks a rule is refused with a clear error, and nothing reaches Redis.
func TestBadPublishesAreRefused(t *testing.T) {
	rs := rig.StartRedis(t)
	h := newEdge(t, rs, "HUB_LIMITS_MAX_EVENT_BYTES=1024", "HUB_LIMITS_MAX_BODY_BYTES=2048")
	big := `{"blob":"` + strings.Repeat("x", 1100) + `"}`
	huge := `{"blob":"` + strings.Repeat("x", 3000) + `"}`
	cases := []struct {
		name, body string
		status     int
		errHas     string
	}{
		{"malformed body", `{"topic":"t","data":{nope}`, 400, "body must be one JSON object"},
		{"missing data", `{"topic":"t"}`, 400, "missing data"},
		{"unknown field", `{"topic":"t","data":1,"extra":true}`, 400, "unknown field"},
		{"two objects", `{"topic":"t","data":1}{"topic":"t","data":2}`, 400, "trailing data"},
		{"bad topic", `{"topic":"a b","data":1}`, 400, "invalid topic"},
		{"reserved topic", `{"topic":"{x}","data":1}`, 400, "invalid topic"},
		{"empty topic", `{"topic":"","data":1}`, 400, "invalid topic"},
		{"bad type", `{"topic":"t","type":"Build Log","data":1}`, 400, "invalid event type"},
		{"oversized event", `{"topic":"t","data":` + big + `}`, 413, "too large"},
		{"oversized body", `{"topic":"t","data":` + huge + `}`, 413, "request body over 2048 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.Post(h.URL+"/publish", "application/json", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var e struct{ Error string }
			_ = json.NewDecoder(resp.Body).Decode(&e)
			if resp.StatusCode != tc.status || !strings.Contains(e.Error, tc.errHas) {
				t.Errorf("POST /publish %s = %d %q, want %d with %q", tc.body[:min(40, len(tc.body))], resp.StatusCode, e.Error, tc.status, tc.errHas)
			}
		})
	}
	n, err := h.RDB.Exists(context.Background(), h.StreamKey("t"), h.StreamKey("a b")).Result()
	if err != nil || n != 0 {
		t.Errorf("after refused publishes, %d streams exist (err %v), want 0", n, err)
	}
}

// Requests the hub cannot serve get 400 and a JSON error before any streaming starts.
func TestBadEventsRequestsGetJSONErrors(t *testing.T) {
	rs := rig.StartRedis(t)
	h := newEdge(t, rs)
	many := make([]string, 33)
	for i := range many {
		many[i] = fmt.Sprintf("t%d", i)
	}
	cases := []struct {
		name   string
		query  url.Values
		header string
		errHas string
	}{
		{"no topic", url.Values{}, "", "missing topic"},
		{"space in topic", rig.TopicQuery("a b"), "", "invalid topic"},
		{"reserved braces", rig.TopicQuery("{a}"), "", "invalid topic"},
		{"pattern star", rig.TopicQuery("a*"), "", "invalid topic"},
		{"empty topic", rig.TopicQuery(""), "", "invalid topic"},
		{"newline in topic", rig.TopicQuery("a\nb"), "", "invalid topic"},
		{"too long topic", rig.TopicQuery(strings.Repeat("x", 129)), "", "invalid topic"},
		{"too many topics", rig.TopicQuery(many...), "", "too many topics"},
		{"garbage Last-Event-ID", rig.TopicQuery("a"), "garbage", "invalid Last-Event-ID"},
		{"three-part id", rig.TopicQuery("a"), "1-2-3", "invalid Last-Event-ID"},
		{"negative id", rig.TopicQuery("a"), "-1-0", "invalid Last-Event-ID"},
		{"bare id for two topics", rig.TopicQuery("a", "b"), "1-0", "invalid Last-Event-ID"},
		{"cursor with bad id", rig.TopicQuery("a", "b"), "a=1-0;b=x", "invalid Last-Event-ID"},
		{"cursor naming a topic twice", rig.TopicQuery("a", "b"), "a=1-0;a=2-0", "invalid Last-Event-ID"},
		{"bad query cursor", url.Values{"topic": {"a"}, "last_event_id": {"nope"}}, "", "invalid Last-Event-ID"},
		{"oversized cursor", rig.TopicQuery("a"), strings.Repeat("1", 9000), "invalid Last-Event-ID"},
		{"negative history", url.Values{"topic": {"a"}, "history": {"-1"}}, "", "history"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := rig.OpenStream(t, h.URL, tc.query, tc.header)
			var e struct{ Error string }
			_ = json.Unmarshal([]byte(c.Body), &e)
			if c.Status != http.StatusBadRequest || !strings.Contains(e.Error, tc.errHas) {
				t.Errorf("GET /events?%s (Last-Event-ID %q) = %d %s, want 400 with %q", tc.query.Encode(), clipped(tc.header), c.Status, c.Body, tc.errHas)
			}
			if ct := c.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type = %q, want application/json", ct)
			}
		})
	}
	if v, _ := rig.MetricValue(rig.Scrape(t, h.URL), "hub_subscriptions"); v != 0 {
		t.Errorf("hub_subscriptions = %v after refused requests, want 0", v)
	}
}

func clipped(s string) string {
	if len(s) > 20 {
		return s[:20] + "…"
	}
	return s
}
