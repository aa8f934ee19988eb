package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/auth"
	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/rig"
)

// What a log pipeline reads from the container, stdout and stderr alike, is JSON lines only; with log.access on,
// each non-stream request has its line, and a refusal is logged at info with its reason and the token's subject but
// never the token; and a refused /events request is counted once.
func TestOutputIsJSONLinesWithAccessAndRefusals(t *testing.T) {
	rs := rig.StartRedis(t)
	env := map[string]string{"HUB_REDIS_URL": rs.URL(), "HUB_REDIS_PREFIX": rig.Prefix(t), "HUB_LOG_ACCESS": "true",
		"HUB_AUTH_HMAC_SECRET": testSecret}
	hub := hubtest.Serve(t, []string{"serve", "--listen", "127.0.0.1:0"}, env)
	base, stdout, stderr := hub.URL, hub.Stdout, hub.Stderr
	tok := signToken(t, auth.Grant{Subscribe: []string{"mine"}}, time.Minute)
	get := func(path string, hdr http.Header) int {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.Header = hdr
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := get("/healthz", nil); s != http.StatusOK {
		t.Fatalf("GET /healthz = %d", s)
	}
	if s := get("/topics/theirs/history", rig.Bearer(tok)); s != http.StatusForbidden {
		t.Fatalf("GET /topics/theirs/history with a token for mine = %d, want 403", s)
	}
	if s := get("/topics", nil); s != http.StatusUnauthorized {
		t.Fatalf("GET /topics without a token = %d, want 401", s)
	}
	if s := get("/events?topic=mine", nil); s != http.StatusUnauthorized {
		t.Fatalf("GET /events without a token = %d, want 401", s)
	}
	// Each refusal is counted once: the /events one by the edge's reason, not again by the stream handler's status.
	fams := rig.ScrapeWith(t, base, tok)
	if v, _ := rig.MetricValue(fams, "hub_http_rejected_total", "reason=no_token"); v != 2 {
		t.Errorf("hub_http_rejected_total{reason=no_token} = %v after GET /topics and GET /events without a token, want 2", v)
	}
	if v, _ := rig.MetricValue(fams, "hub_sse_requests_rejected_total"); v != 0 {
		t.Errorf("hub_sse_requests_rejected_total = %v, want 0: the refusal is the edge's, counted there", v)
	}
	if err := hub.Stop(); err != nil {
		t.Fatalf("run() = %v", err)
	}

	lines := append(jsonLines(t, "stdout", stdout.String()), jsonLines(t, "stderr", stderr.String())...)
	find := func(msg string, fields map[string]any) map[string]any {
		for _, m := range lines {
			match := m["message"] == msg
			for k, v := range fields {
				match = match && m[k] == v
			}
			if match {
				return m
			}
		}
		t.Errorf("no %q line with %v in the output:\n%s%s", msg, fields, stdout, stderr)
		return nil
	}
	find("hub listening", map[string]any{"url": base})
	find("request", map[string]any{"level": "info", "route": "/healthz", "status": 200.0})
	find("request refused", map[string]any{"level": "info", "reason": "forbidden", "subject": "test", "path": "/topics/theirs/history"})
	find("request refused", map[string]any{"level": "info", "reason": "no_token", "subject": ""})
	if strings.Contains(stderr.String(), tok) || strings.Contains(stdout.String(), tok) {
		t.Error("the token appears in the output")
	}
}

// jsonLines decodes each line of out as one JSON object; a line that is not one, even an empty line inside out,
// fails the test, naming what wrote it.
func jsonLines(t *testing.T, what, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for l := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Errorf("%s line %q is not JSON: %v", what, l, err)
			continue
		}
		lines = append(lines, m)
	}
	return lines
}
