package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/redistest"
	"github.com/syncverse/hub/internal/testutil"
)

// The line that says the hub listens is a log line like the others (level, time), with a URL a user can open: on a
// wildcard listen address, 127.0.0.1 and the port, not http://[::]:PORT; and the address as it was given.
func TestListeningLineIsALogLineWithAnOpenableURL(t *testing.T) {
	rs := redistest.Start(t)
	env := map[string]string{"HUB_REDIS_URL": rs.URL(), "HUB_REDIS_PREFIX": redistest.Prefix(t), "HUB_AUTH_HMAC_SECRET": testSecret,
		"HUB_LOG_LEVEL": "warn"} // the line is written whatever the level: a parent waits for it
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := &testutil.SyncBuffer{}, &testutil.SyncBuffer{}
	done, urls := make(chan error, 1), make(chan string, 1)
	go func() {
		done <- hubtest.Run(ctx, []string{"serve", "--listen", "0.0.0.0:0"}, func(k string) string { return env[k] }, strings.NewReader(""),
			stdout, stderr, func(url string) { urls <- url })
	}()
	var url string
	select {
	case url = <-urls:
	case err := <-done:
		t.Fatalf("run() = %v before listening; logs:\n%s", err, stderr)
	case <-time.After(30 * time.Second):
		t.Fatal("the hub did not listen within 30s")
	}
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run() = %v", err)
		}
	}()
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
