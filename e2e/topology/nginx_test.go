//go:build slow

package topology

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/rig"
)

// startNginx runs deploy/nginx.conf in front of one hub, with its own ports and paths and the given idle timeout
// for /events, and returns the proxy's base URL.
func startNginx(t *testing.T, upstream string, readTimeout time.Duration) string {
	t.Helper()
	hubtest.NeedTool(t, "nginx")
	b, err := os.ReadFile("deploy/nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if os.Geteuid() == 0 {
		_ = os.Chmod(dir, 0o755) // nginx's workers drop root and must still reach the temp paths
	}
	port := hubtest.FreeBusPort(t)
	conf := string(b)
	replace := func(re, with string) {
		t.Helper()
		r := regexp.MustCompile(re)
		if !r.MatchString(conf) {
			t.Fatalf("deploy/nginx.conf has nothing matching %s; update the test with the file", re)
		}
		conf = r.ReplaceAllString(conf, with)
	}
	replace(`worker_processes auto;`, "worker_processes 1;")
	replace(`/tmp/`, dir+"/")
	replace(`(?s)upstream hub \{.*?keepalive`, "upstream hub {\n        server "+upstream+";\n        keepalive")
	replace(`listen 8080;`, "listen "+loopback(port)+";")
	replace(`(location = /events \{[^}]*?)proxy_read_timeout 60s;`, "${1}proxy_read_timeout "+strconv.Itoa(int(readTimeout.Seconds()))+"s;")
	replace(`access_log /dev/stdout;`, "access_log off;")
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	startProc(t, dir, "nginx", "-p", dir, "-c", path, "-g", "daemon off;")
	base := "http://" + loopback(port)
	rig.Eventually(t, 10*time.Second, "nginx answers /healthz", func() bool {
		resp, err := http.Get(base + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return base
}

// A proxy that ends connections idle for 2 s keeps a stream open for much longer while the hub sends a heartbeat
// every 500 ms, and events still arrive through it; without heartbeats within the timeout it cuts the stream.
func TestNginxHeartbeatsKeepStreamsAlive(t *testing.T) {
	const proxyTimeout = 2 * time.Second
	rs := rig.StartRedis(t)

	t.Run("heartbeat shorter than the proxy timeout", func(t *testing.T) {
		h := hubtest.Start(t, rs, "HUB_SSE_HEARTBEAT=500ms")
		proxy := startNginx(t, h.Addr, proxyTimeout)
		s := rig.OpenStream(t, proxy, rig.TopicQuery("quiet"), "")
		if s.Status != http.StatusOK || !strings.HasPrefix(s.Header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("GET /events through nginx = %d %q, want 200 text/event-stream", s.Status, s.Header.Get("Content-Type"))
		}
		if f := s.Next(time.Second); f.Retry == "" {
			t.Fatalf("first frame through nginx = %+v, want the retry hint at once (is the proxy buffering?)", f)
		}
		heartbeats := 0
		quiet := time.After(3 * proxyTimeout)
	idle:
		for {
			select {
			case f, ok := <-s.Frames():
				if !ok {
					t.Fatalf("nginx ended the stream after %d heartbeats; heartbeats must keep it open", heartbeats)
				}
				if f.Comment == "heartbeat" {
					heartbeats++
				}
			case <-quiet:
				break idle
			}
		}
		if heartbeats < 5 {
			t.Errorf("%d heartbeats in %v, want at least 5", heartbeats, 3*proxyTimeout)
		}
		id := h.Publish("quiet", "progress", hubtest.EventData(1))
		if f := s.NextEvent(5 * time.Second); f.ID != id || f.Data != hubtest.EventData(1) {
			t.Errorf("event after the idle time = %+v, want id %s data %s", f, id, hubtest.EventData(1))
		}
	})

	t.Run("heartbeat longer than the proxy timeout", func(t *testing.T) {
		h := hubtest.Start(t, rs, "HUB_SSE_HEARTBEAT=30s")
		proxy := startNginx(t, h.Addr, proxyTimeout)
		s := rig.OpenStream(t, proxy, rig.TopicQuery("quiet"), "")
		start := time.Now()
		if !s.WaitEnd(3 * proxyTimeout) {
			t.Fatalf("stream still open after %v without heartbeats; the proxy timeout did not apply", 3*proxyTimeout)
		}
		if took := time.Since(start); took < proxyTimeout-200*time.Millisecond {
			t.Errorf("stream ended after %v, before the proxy's %v timeout", took, proxyTimeout)
		}
	})
}
