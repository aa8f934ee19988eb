// Package tracing runs the hub binary with tracing on: its spans reach a real OTLP/HTTP receiver when it shuts down.
package tracing

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/internal/tracing/tracingtest"
)

func TestMain(m *testing.M) { rig.MainNoLeaks(m) }

const (
	publisherTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	publisherSpan  = "00f067aa0ba902b7"
)

// The batch waits ten minutes before exporting on its own, so the spans of a publish reach the receiver only
// because SIGTERM's shutdown flushes them.
func TestHubFlushesSpansOnShutdown(t *testing.T) {
	bin := filepath.Join(hubtest.BuildHub(t), "hub")
	rs := rig.StartRedis(t) // a real redis-server
	recv := tracingtest.Start(t)
	h, err := rig.StartHub(bin, "127.0.0.1:0", []string{"HUB_REDIS_URL=" + rs.URL(), "HUB_TRACING_ENABLED=true",
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + recv.URL, "OTEL_BSP_SCHEDULE_DELAY=600000", "OTEL_SERVICE_NAME=e2e-hub"}, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Stop() })
	req, _ := http.NewRequest(http.MethodPost, h.URL+"/publish", strings.NewReader(`{"topic":"e2e","data":{"workflow":"wf-1"}}`))
	req.Header.Set("traceparent", "00-"+publisherTrace+"-"+publisherSpan+"-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /publish = %d", resp.StatusCode)
	}
	if n, _ := recv.Requests(); n != 0 {
		t.Fatalf("%d exports before shutdown with a ten-minute batch delay", n)
	}
	if _, err := h.Term(30 * time.Second); err != nil {
		t.Fatalf("SIGTERM: %v\n%s", err, h.Logs())
	}
	var pub []tracingtest.Span
	for _, s := range recv.Named("POST /publish") {
		if s.TraceID == publisherTrace && s.ParentSpanID == publisherSpan && s.Service == "e2e-hub" {
			pub = append(pub, s)
		}
	}
	if len(pub) != 1 || len(recv.Named("redis publish script")) != 1 {
		t.Fatalf("after shutdown the receiver holds %+v; want the publish span (child of %s) and the script's\n%s",
			recv.Spans(), publisherSpan, h.Logs())
	}
}
