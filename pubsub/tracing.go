package pubsub

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/syncverse/hub/hub"
)

// Span names of the hub's Redis side (docs/tracing.md).
const (
	SpanPublishScript = "redis publish script"
	SpanFanOut        = "fanout"
)

// runScript runs the publish script once; with a tracer it is a client span, a child of ctx's span, or of the
// message's traceparent when ctx has none.
func (p *Publisher) runScript(ctx context.Context, topic, tp string, keys []string, args []any) (any, error) {
	if p.cfg.Tracer == nil {
		return p.script.Run(ctx, p.rdb, keys, args...).Result()
	}
	if !trace.SpanContextFromContext(ctx).IsValid() && tp != "" {
		if sc, err := ParseTraceParent(tp); err == nil {
			ctx = trace.ContextWithRemoteSpanContext(ctx, sc)
		}
	}
	ctx, span := p.cfg.Tracer.Start(ctx, SpanPublishScript, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(semconv.DBSystemNameRedis, semconv.DBOperationName("EVALSHA"), attribute.String("hub.topic", topic)))
	defer span.End()
	reply, err := p.script.Run(ctx, p.rdb, keys, args...).Result()
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	return reply, err
}

// tracedBroadcaster records the broadcast of each event that carries a traceparent as a consumer span whose parent
// is the publisher's span, so the trace shows the event reaching this hub's subscribers. Events without one pass
// straight through. The subscriber only uses it when tracing is on; off, events go to the hub's Broadcast directly.
type tracedBroadcaster struct {
	b      hub.Broadcaster
	tracer trace.Tracer
}

func (t tracedBroadcaster) Broadcast(ev *hub.Event) {
	if ev.TraceParent == "" {
		t.b.Broadcast(ev)
		return
	}
	sc, err := ParseTraceParent(ev.TraceParent)
	if err != nil {
		t.b.Broadcast(ev)
		return
	}
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), sc)
	_, span := t.tracer.Start(ctx, SpanFanOut, consumerSpan)
	if span.IsRecording() { // attributes only for a sampled event: one sampled out costs little more than the check
		span.SetAttributes(attribute.String("hub.topic", ev.Topic), attribute.String("hub.event_id", ev.IDText),
			attribute.String("hub.event_source", string(ev.Source)))
	}
	t.b.Broadcast(ev)
	span.End()
}

var consumerSpan = trace.WithSpanKind(trace.SpanKindConsumer)

// traced wraps b when tracing is on.
func traced(b hub.Broadcaster, tracer trace.Tracer) hub.Broadcaster {
	if tracer == nil {
		return b
	}
	return tracedBroadcaster{b: b, tracer: tracer}
}
