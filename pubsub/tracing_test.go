package pubsub

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/syncverse/hub/hub"
)

// testTraceParent is the W3C specification's example.
const testTraceParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

var traceParentCases = []struct {
	name, tp string
	ok       bool
}{
	{"the specification's example", testTraceParent, true},
	{"not sampled", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00", true},
	{"a later version of the same size", "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", true},
	{"reserved flags of version 00", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-04", false},
	{"random flag", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-03", true},
	{"version ff", "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", false},
	{"upper case", "00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01", false},
	{"zero trace id", "00-00000000000000000000000000000000-b7ad6b7169203331-01", false},
	{"zero parent id", "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", false},
	{"short", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333-01", false},
	{"long", testTraceParent + "-x", false},
	{"empty", "", false},
	{"underscores for dashes", "00_0af7651916cd43dd8448eb211c80319c_b7ad6b7169203331_01", false},
	{"not hex", "00-0af7651916cd43dd8448eb211c80319g-b7ad6b7169203331-01", false},
	{"quote inside", "00-0af7651916cd43dd8448eb211c8031\"c-b7ad6b7169203331-01", false},
}

func TestParseTraceParent(t *testing.T) {
	for _, c := range traceParentCases {
		sc, err := ParseTraceParent(c.tp)
		if (err == nil) != c.ok {
			t.Errorf("%s: ParseTraceParent(%q) = %v, want ok %v", c.name, c.tp, err, c.ok)
			continue
		}
		if c.ok && (sc.TraceID().String() != c.tp[3:35] || sc.SpanID().String() != c.tp[36:52] || !sc.IsRemote()) {
			t.Errorf("%s: ParseTraceParent(%q) = trace %s span %s remote %v", c.name, c.tp, sc.TraceID(), sc.SpanID(), sc.IsRemote())
		}
		if c.ok && TraceIDOf(c.tp) != c.tp[3:35] {
			t.Errorf("%s: TraceIDOf(%q) = %q", c.name, c.tp, TraceIDOf(c.tp))
		}
	}
	if got := FormatTraceParent(mustSpanContext(t, testTraceParent)); got != testTraceParent {
		t.Errorf("FormatTraceParent(ParseTraceParent(%q)) = %q", testTraceParent, got)
	}
}

func mustSpanContext(t testing.TB, tp string) trace.SpanContext {
	t.Helper()
	sc, err := ParseTraceParent(tp)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// FuzzParseTraceParent holds the parser to OpenTelemetry's own W3C propagator on inputs of the stored size (it
// accepts longer ones of later versions, which the hub does not store), and to formatting it back.
func FuzzParseTraceParent(f *testing.F) {
	for _, c := range traceParentCases {
		f.Add(c.tp)
	}
	prop := propagation.TraceContext{}
	f.Fuzz(func(t *testing.T, tp string) {
		sc, err := ParseTraceParent(tp)
		if err != nil {
			if TraceIDOf(tp) != "" {
				t.Fatalf("TraceIDOf(%q) is not empty for an invalid traceparent", tp)
			}
			if len(tp) != TraceParentLen {
				return
			}
		}
		ref := trace.SpanContextFromContext(prop.Extract(context.Background(), propagation.MapCarrier{"traceparent": tp}))
		if (err == nil) != ref.IsValid() {
			t.Fatalf("ParseTraceParent(%q) = %v; the W3C propagator says valid %v", tp, err, ref.IsValid())
		}
		if err != nil {
			return
		}
		if sc.TraceID() != ref.TraceID() || sc.SpanID() != ref.SpanID() || sc.TraceFlags() != ref.TraceFlags() {
			t.Fatalf("ParseTraceParent(%q) = %v; the propagator reads %v", tp, sc, ref)
		}
		if back := FormatTraceParent(sc); back[3:52] != tp[3:52] {
			t.Fatalf("FormatTraceParent(ParseTraceParent(%q)) = %q", tp, back)
		}
	})
}

// TestPublishScriptStoresOnlyValidTraceParents: the script keeps exactly the traceparents the Go parser accepts,
// so a publisher in another language that sends a bad one publishes its event without it.
func TestPublishScriptStoresOnlyValidTraceParents(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		pub := b.publisher(PublisherConfig{})
		for _, c := range traceParentCases {
			keys, args := pub.scriptCall(Message{Topic: "tp", Type: "progress", Data: []byte(`{}`)}, "")
			args = append(args, 0, "", c.tp)
			id, err := publishScript.Run(ctx, b.rdb, keys, args...).Text()
			if err != nil {
				t.Fatalf("%s: script with traceparent %q = %v, want the event published", c.name, c.tp, err)
			}
			got, stored := b.entry(t, "tp", id).Values["tp"]
			if stored != c.ok || (stored && got != c.tp) {
				t.Errorf("%s: entry's tp = %v (stored %v), want stored %v", c.name, got, stored, c.ok)
			}
		}
	})
}

func TestPublisherStoresAndDeliversTheTraceParent(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		s := startSubscriber(t, b, SubscriberConfig{}, "traced")
		ps := b.subscribe(t, "traced")
		pub := b.publisher(PublisherConfig{})
		fromCtx := "00-11111111111111111111111111111111-2222222222222222-01"
		spanCtx := trace.ContextWithSpanContext(ctx, mustSpanContext(t, fromCtx))
		msgs := []struct {
			ctx  context.Context
			m    Message
			want string
		}{
			{ctx, Message{Topic: "traced", Data: []byte(`{"n":1}`), TraceParent: testTraceParent}, testTraceParent},
			{spanCtx, Message{Topic: "traced", Data: []byte(`{"n":2}`)}, fromCtx},
			{ctx, Message{Topic: "traced", Data: []byte(`{"n":3}`), TraceParent: "00-bad", IdempotencyKey: "k"}, ""},
			{ctx, Message{Topic: "traced", Data: []byte(`{"n":4}`)}, ""},
		}
		for i, c := range msgs {
			res, err := pub.PublishMessage(c.ctx, c.m)
			if err != nil {
				t.Fatalf("publish %d: %v", i, err)
			}
			if ignored := c.m.TraceParent != "" && c.want == ""; (res.TraceIgnored != nil) != ignored ||
				(ignored && !errors.Is(res.TraceIgnored, ErrTraceParent)) {
				t.Errorf("publish %d: TraceIgnored = %v, want ignored %v", i, res.TraceIgnored, ignored)
			}
			if got, _ := b.entry(t, "traced", res.ID).Values["tp"].(string); got != c.want {
				t.Errorf("publish %d: stored tp %q, want %q", i, got, c.want)
			}
			m, err := ps.ReceiveMessage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var env Envelope
			if err := json.Unmarshal([]byte(m.Payload), &env); err != nil || env.Trace != c.want {
				t.Errorf("publish %d: live envelope %s has trace %q (%v), want %q", i, m.Payload, env.Trace, err, c.want)
			}
			if c.want == "" && strings.Contains(m.Payload, "trace") {
				t.Errorf("publish %d: envelope without a traceparent names one: %s", i, m.Payload)
			}
		}
		got := s.rec.waitN(t, len(msgs), within)
		evs, _, err := b.store().Read(ctx, "traced", hub.ID{}, 10)
		if err != nil || len(evs) != len(msgs) {
			t.Fatalf("history = %d events, %v", len(evs), err)
		}
		for i, c := range msgs {
			if got[i].TraceParent != c.want || evs[i].TraceParent != c.want {
				t.Errorf("event %d: delivered live with %q, read back with %q, want %q", i, got[i].TraceParent, evs[i].TraceParent, c.want)
			}
		}
	})
}

// TestTracingSpans: with a tracer, the script's round trip is a child of the publish's span and the broadcast of an
// event is a child of its publisher's span; events without a traceparent make no span.
func TestTracingSpans(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		exp := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		defer func() { _ = tp.Shutdown(context.Background()) }()
		tracer := tp.Tracer("test")
		s := startSubscriber(t, b, SubscriberConfig{Tracer: tracer}, "spans")
		pub := b.publisher(PublisherConfig{Tracer: tracer})
		if _, err := pub.PublishMessage(ctx, Message{Topic: "spans", Data: []byte(`1`), TraceParent: testTraceParent}); err != nil {
			t.Fatal(err)
		}
		if _, err := pub.PublishMessage(ctx, Message{Topic: "spans", Data: []byte(`2`)}); err != nil {
			t.Fatal(err)
		}
		s.rec.waitN(t, 2, within)
		parent := mustSpanContext(t, testTraceParent)
		byName := map[string][]tracetest.SpanStub{}
		for _, sp := range exp.GetSpans() {
			byName[sp.Name] = append(byName[sp.Name], sp)
		}
		if len(byName[SpanPublishScript]) != 2 || len(byName[SpanFanOut]) != 1 {
			t.Fatalf("spans %v, want 2 %q and 1 %q", byName, SpanPublishScript, SpanFanOut)
		}
		for _, sp := range append(byName[SpanFanOut], byName[SpanPublishScript][0]) {
			if sp.SpanContext.TraceID() != parent.TraceID() || sp.Parent.SpanID() != parent.SpanID() {
				t.Errorf("span %q: trace %s parent %s, want trace %s parent %s", sp.Name, sp.SpanContext.TraceID(),
					sp.Parent.SpanID(), parent.TraceID(), parent.SpanID())
			}
		}
		if sp := byName[SpanPublishScript][1]; sp.Parent.IsValid() {
			t.Errorf("the script span of a publish without a trace has parent %v", sp.Parent)
		}
	})
}
