package tracing_test

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/internal/tracing"
	"github.com/syncverse/hub/internal/tracing/tracingtest"
)

func TestMain(m *testing.M) { rig.MainNoLeaks(m) }

func env(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

// Off unless tracing.enabled, and OTEL_SDK_DISABLED=true turns it off again: no tracer, nothing to shut down.
func TestStartOff(t *testing.T) {
	for name, c := range map[string]struct {
		enabled bool
		vars    map[string]string
	}{
		"tracing.enabled false":  {false, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}},
		"OTEL_SDK_DISABLED=true": {true, map[string]string{"OTEL_SDK_DISABLED": "TRUE"}},
	} {
		tr, err := tracing.Start(context.Background(), c.enabled, env(c.vars), "test", zerolog.Nop())
		if err != nil || tr.Enabled() || tr.Tracer != nil {
			t.Errorf("%s: Start = %+v, %v; want tracing off", name, tr, err)
		}
		if err := tr.Shutdown(context.Background()); err != nil {
			t.Errorf("%s: Shutdown = %v", name, err)
		}
	}
	var zero *tracing.Tracing
	if zero.Enabled() || zero.Shutdown(context.Background()) != nil {
		t.Error("a nil Tracing is not off")
	}
}

// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is used as it is and wins over OTEL_EXPORTER_OTLP_ENDPOINT, to which /v1/traces
// is added; service.name defaults to the hub's; Shutdown flushes what is batched.
func TestStartExportsWhereTheVariablesSay(t *testing.T) {
	base, traces := tracingtest.Start(t), tracingtest.Start(t)
	for _, c := range []struct {
		vars    map[string]string
		want    *tracingtest.Receiver
		service string
	}{
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": base.URL + "/"}, base, tracing.DefaultServiceName},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": base.URL, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": traces.URL + "/v1/traces",
			"OTEL_SERVICE_NAME": "hub-b"}, traces, "hub-b"},
	} {
		tr, err := tracing.Start(context.Background(), true, env(c.vars), "test", zerolog.Nop())
		if err != nil || !tr.Enabled() {
			t.Fatalf("%v: Start = %v, enabled %v", c.vars, err, tr.Enabled())
		}
		_, span := tr.Tracer.Start(context.Background(), "probe")
		span.End()
		tr.ShutdownWithin(10*time.Second, zerolog.Nop())
		got := c.want.Named("probe")
		if len(got) != 1 || got[0].Service != c.service {
			t.Fatalf("%v: received %+v, want one probe span of service %s", c.vars, c.want.Spans(), c.service)
		}
		c.want.Reset()
	}
	for _, r := range []*tracingtest.Receiver{base, traces} {
		if _, bad := r.Requests(); len(bad) > 0 {
			t.Errorf("requests that were not OTLP trace exports: %v", bad)
		}
	}
}
