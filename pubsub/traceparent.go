package pubsub

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/trace"
)

// TraceParentLen is the length of a W3C traceparent of version 00: "vv-<32 hex trace id>-<16 hex parent id>-ff".
const TraceParentLen = 55

// ErrTraceParent is the kind of error ParseTraceParent returns. An event with an invalid traceparent is still
// published, without one: tracing never costs a publish.
var ErrTraceParent = errors.New("invalid traceparent")

// ParseTraceParent reads a W3C traceparent (https://www.w3.org/TR/trace-context/#traceparent-header) as the hub stores
// it: exactly 55 bytes, lowercase hex, a version other than ff, a trace id and a parent span id that are not all
// zeros, and for version 00 no reserved flag set (flags 00 to 03). A later version with more fields after the flags is refused too, so what is stored is always that size.
func ParseTraceParent(s string) (trace.SpanContext, error) {
	if len(s) != TraceParentLen {
		return trace.SpanContext{}, ErrTraceParent
	}
	if s[2] != '-' || s[35] != '-' || s[52] != '-' || s[:2] == "ff" {
		return trace.SpanContext{}, ErrTraceParent
	}
	var tid trace.TraceID
	var sid trace.SpanID
	var flags [1]byte
	var version [1]byte
	if !unhex(version[:], s[0:2]) || !unhex(tid[:], s[3:35]) || !unhex(sid[:], s[36:52]) || !unhex(flags[:], s[53:55]) {
		return trace.SpanContext{}, ErrTraceParent
	}
	if !tid.IsValid() || !sid.IsValid() || (version[0] == 0 && flags[0] > 3) {
		return trace.SpanContext{}, ErrTraceParent
	}
	return trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    tid,
		SpanID:     sid,
		TraceFlags: trace.TraceFlags(flags[0]) & (trace.FlagsSampled | trace.FlagsRandom),
		Remote:     true,
	}), nil
}

// unhex decodes lowercase hex s into dst (len(s) == 2*len(dst)); uppercase is refused, as the specification says.
func unhex(dst []byte, s string) bool {
	for i := range dst {
		hi, ok1 := nibble(s[2*i])
		lo, ok2 := nibble(s[2*i+1])
		if !ok1 || !ok2 {
			return false
		}
		dst[i] = hi<<4 | lo
	}
	return true
}

func nibble(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// FormatTraceParent writes a span context as a version 00 traceparent, or "" for an invalid one.
func FormatTraceParent(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	const hexdigits = "0123456789abcdef"
	b := make([]byte, 0, TraceParentLen)
	b = append(b, "00-"...)
	tid, sid := sc.TraceID(), sc.SpanID()
	for _, c := range tid {
		b = append(b, hexdigits[c>>4], hexdigits[c&15])
	}
	b = append(b, '-')
	for _, c := range sid {
		b = append(b, hexdigits[c>>4], hexdigits[c&15])
	}
	f := byte(sc.TraceFlags() & (trace.FlagsSampled | trace.FlagsRandom))
	b = append(b, '-', hexdigits[f>>4], hexdigits[f&15])
	return string(b)
}

// TraceIDOf returns the trace id of a valid traceparent (its 32 hex digits), or "".
func TraceIDOf(traceparent string) string {
	if _, err := ParseTraceParent(traceparent); err != nil {
		return ""
	}
	return traceparent[3:35]
}

// traceParentFor is the traceparent a message is published with: its own TraceParent when valid, else the span
// context of ctx when it has one (a publisher instrumented with OpenTelemetry), else none. ignored says an invalid
// TraceParent was dropped.
func traceParentFor(ctx context.Context, m Message) (tp string, ignored error) {
	if m.TraceParent != "" {
		if _, err := ParseTraceParent(m.TraceParent); err != nil {
			return "", err
		}
		return m.TraceParent, nil
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		return FormatTraceParent(sc), nil
	}
	return "", nil
}
