package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/syncverse/hub/internal/config"
	"github.com/syncverse/hub/internal/rig"
)

// A publish body trickled slower than limits.request_read_timeout is cut with a 408, so it cannot hold a
// connection for ever.
func TestPublishBodyTimeout(t *testing.T) {
	reg := prometheus.NewRegistry()
	cfg := config.Default()
	cfg.Limits.RequestReadTimeout = 200 * time.Millisecond
	sec, err := NewSecurity(cfg, reg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	a := &api{cfg: cfg, published: newPublishMetrics(reg), sec: sec}
	e := echo.New()
	e.HTTPErrorHandler = jsonErrors
	e.POST("/publish", a.publish, sec.authenticate, sec.limitPublish)
	srv := httptest.NewUnstartedServer(sec.guard(e))
	sec.ServerHooks(srv.Config, cfg.Limits.RequestReadTimeout)
	srv.Start()
	defer srv.Close()
	start := time.Now()
	status, body := rig.RawRequest(t, strings.TrimPrefix(srv.URL, "http://"), "POST /publish HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n{")
	if status != http.StatusRequestTimeout || !strings.Contains(body, "not received within 200ms") {
		t.Errorf("trickled publish = %d %q, want 408 with a JSON error", status, body)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("trickled publish answered after %v, want about 200ms", d)
	}
}
