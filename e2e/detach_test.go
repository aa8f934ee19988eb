package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/rig"
)

// sse.detach picks who serves an HTTP/1.1 stream, the raw engine or net/http, as the stream's log line says; either
// way the stream delivers.
func TestSSEDetachSwitch(t *testing.T) {
	rs := rig.StartRedis(t)
	for _, c := range []struct {
		env    []string
		engine string
	}{
		{nil, `"engine":"raw"`},
		{[]string{"HUB_SSE_DETACH=true"}, `"engine":"raw"`},
		{[]string{"HUB_SSE_DETACH=false"}, `"engine":"net/http"`},
	} {
		h := hubtest.Start(t, rs, c.env...)
		s := rig.OpenStream(t, h.URL, rig.TopicQuery("detach"), "0-0")
		if s.Status != 200 {
			t.Fatalf("with %v: GET /events = %d %s, want 200", c.env, s.Status, s.Body)
		}
		id := h.Publish("detach", "progress", `{"n":1}`)
		if f := s.NextEvent(5 * time.Second); f.ID != id {
			t.Errorf("with %v: event %+v, want id %s", c.env, f, id)
		}
		if logs := h.Logs(); !strings.Contains(logs, c.engine) {
			t.Errorf("with %v: no stream opened with %s in the log:\n%s", c.env, c.engine, logs)
		}
		s.Close()
		h.Stop()
	}
}
