package e2e

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/rig"
)

// The line that says the hub listens is a log line like the others (level, time), with a URL a user can open: on a
// wildcard listen address, 127.0.0.1 and the port, not http://[::]:PORT; and the address as it was given.
func TestListeningLineIsALogLineWithAnOpenableURL(t *testing.T) {
	rs := rig.StartRedis(t)
	env := map[string]string{"HUB_REDIS_URL": rs.URL(), "HUB_REDIS_PREFIX": rig.Prefix(t), "HUB_AUTH_HMAC_SECRET": testSecret,
		"HUB_LOG_LEVEL": "warn"} // the line is written whatever the level: a parent waits for it
	hub := hubtest.Serve(t, []string{"serve", "--listen", "0.0.0.0:0"}, env)
	url, stdout := hub.URL, hub.Stdout
	if !regexp.MustCompile(`^http://127\.0\.0\.1:\d+$`).MatchString(url) {
		t.Errorf("the hub on 0.0.0.0:0 says it listens on %q, want http://127.0.0.1:PORT", url)
	}
	resp, err := http.Get(url + "/healthz")
	if err != nil {
		t.Fatalf("GET %s/healthz: %v", url, err)
	}
	resp.Body.Close()
	var line map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(stdout.String())), &line); err != nil {
		t.Fatalf("stdout %q is not one JSON line: %v", stdout, err)
	}
	ts, _ := line["time"].(string)
	if _, err := time.Parse(time.RFC3339, ts); err != nil || line["level"] != "info" || line["message"] != "hub listening" ||
		line["url"] != url || line["listen"] != "0.0.0.0:0" || !strings.HasSuffix(line["addr"].(string), url[strings.LastIndex(url, ":"):]) {
		t.Errorf("the listening line = %v, want level info, a time, url %s, listen 0.0.0.0:0 and the bound addr", line, url)
	}
}
