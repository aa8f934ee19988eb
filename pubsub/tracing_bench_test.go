package pubsub

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/syncverse/hub/hub"
)

type discard struct{ n int }

func (d *discard) Broadcast(*hub.Event) { d.n++ }

// BenchmarkFanOutTracing is the subscriber's broadcast of one event: tracing off (the hub's Broadcast itself, which
// traced returns unwrapped: no allocation, no span), on for an event without a traceparent, and on for a traced
// event sampled out and sampled in.
func BenchmarkFanOutTracing(b *testing.B) {
	plain := &hub.Event{Topic: "t", IDText: "1-0", Type: "progress", Data: []byte(`{}`)}
	traced := &hub.Event{Topic: "t", IDText: "1-0", Type: "progress", Data: []byte(`{}`), TraceParent: testTraceParent}
	unsampled := &hub.Event{Topic: "t", IDText: "1-0", Type: "progress", Data: []byte(`{}`),
		TraceParent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter()))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	cases := []struct {
		name string
		b    hub.Broadcaster
		ev   *hub.Event
	}{
		{"off", traced_(nil), traced},
		{"on/no-traceparent", traced_(tp), plain},
		{"on/sampled-out", traced_(tp), unsampled},
		{"on/sampled", traced_(tp), traced},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.b.Broadcast(c.ev)
			}
		})
	}
}

func traced_(tp *sdktrace.TracerProvider) hub.Broadcaster {
	if tp == nil {
		return traced(&discard{}, nil)
	}
	return traced(&discard{}, tp.Tracer("bench"))
}

// TestTracingOffAddsNothing: with no tracer the subscriber hands events to the hub's own Broadcast, and a traced
// event's broadcast allocates nothing.
func TestTracingOffAddsNothing(t *testing.T) {
	d := &discard{}
	if b := traced(d, nil); b != hub.Broadcaster(d) {
		t.Fatalf("traced(b, nil) = %T, want b itself", b)
	}
	ev := &hub.Event{Topic: "t", IDText: "1-0", Type: "progress", Data: []byte(`{}`), TraceParent: testTraceParent}
	b := traced(d, nil)
	if n := testing.AllocsPerRun(100, func() { b.Broadcast(ev) }); n != 0 {
		t.Errorf("broadcast with tracing off allocates %v times, want 0", n)
	}
}
