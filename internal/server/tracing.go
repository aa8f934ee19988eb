package server

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/syncverse/hub/pubsub"
)

// SpanPublish is the name of POST /publish's server span.
const SpanPublish = "POST /publish"

// traceContext reads W3C traceparent and tracestate headers.
var traceContext = propagation.TraceContext{}

// traced makes a request a server span, a child of its traceparent header's span (tracestate included), when the
// hub traces; without a tracer it is the handler itself.
func (a *api) traced(next echo.HandlerFunc) echo.HandlerFunc {
	if a.tracer == nil {
		return next
	}
	return func(c echo.Context) error {
		r := c.Request()
		ctx := traceContext.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := a.tracer.Start(ctx, SpanPublish, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(semconv.HTTPRequestMethodKey.String(r.Method), semconv.HTTPRoute("/publish")))
		defer span.End()
		c.SetRequest(r.WithContext(ctx))
		err := next(c)
		status := c.Response().Status
		var he *echo.HTTPError
		if errors.As(err, &he) {
			status = he.Code
		}
		span.SetAttributes(semconv.HTTPResponseStatusCode(status))
		if status >= http.StatusInternalServerError || (err != nil && he == nil) {
			span.SetStatus(codes.Error, http.StatusText(status))
		}
		return err
	}
}

// traceParent is the request's traceparent header, to store with the event, or "" when it has none or an invalid
// one: that is ignored with a warning in the log and a Warning header, and the event is published all the same.
func (a *api) traceParent(c echo.Context) string {
	tp := c.Request().Header.Get("traceparent")
	if tp == "" {
		return ""
	}
	if _, err := pubsub.ParseTraceParent(tp); err != nil {
		a.log.Warn().Str("traceparent", truncate(tp, 80)).Msg("POST /publish: invalid traceparent header ignored; the event is published without it")
		c.Response().Header().Add("Warning", `199 - "invalid traceparent header ignored"`)
		return ""
	}
	return tp
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// traceAttrs names what a span is about; kept here so the edge's span and the store's agree.
func topicAttr(topic string) attribute.KeyValue { return attribute.String("hub.topic", topic) }
