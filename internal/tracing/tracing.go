// Package tracing is the hub's OpenTelemetry tracing: off unless tracing.enabled, then a tracer provider that
// exports spans over OTLP/HTTP, configured by the standard OTEL_* variables (docs/tracing.md).
package tracing

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// DefaultServiceName is service.name when OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) names none.
const DefaultServiceName = "syncverse-hub"

// ScopeName is the instrumentation scope of the hub's spans.
const ScopeName = "github.com/syncverse/hub"

// Tracing is the hub's tracer, or none. The zero value is tracing off: Tracer is nil and Shutdown does nothing.
type Tracing struct {
	// Tracer is nil when tracing is off; the hub's parts then skip every span (and the cost of one).
	Tracer   trace.Tracer
	provider *sdktrace.TracerProvider
}

// Enabled reports whether spans are recorded.
func (t *Tracing) Enabled() bool { return t != nil && t.Tracer != nil }

// Start returns the hub's tracing: off when enabled (tracing.enabled) is false or OTEL_SDK_DISABLED is "true",
// else a provider that batches spans to an OTLP/HTTP exporter. The exporter reads OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and their headers, timeouts and compression; the provider reads
// OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG (default: parentbased_always_on) and the batch's OTEL_BSP_*;
// the resource reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES. Nothing is sent until a span ends, so Start
// succeeds without a collector.
func Start(ctx context.Context, enabled bool, getenv func(string) string, version string, log zerolog.Logger) (*Tracing, error) {
	if !enabled {
		return &Tracing{}, nil
	}
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		log.Info().Msg("tracing.enabled is true but OTEL_SDK_DISABLED=true: tracing off")
		return &Tracing{}, nil
	}
	exp, err := otlptracehttp.New(ctx, endpointOptions(getenv)...)
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
	}
	fromEnv, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	res, err := resource.Merge(resource.NewSchemaless(semconv.ServiceName(DefaultServiceName),
		semconv.ServiceVersion(version)), fromEnv)
	if name := strings.TrimSpace(getenv("OTEL_SERVICE_NAME")); name != "" && err == nil {
		res, err = resource.Merge(res, resource.NewSchemaless(semconv.ServiceName(name)))
	}
	if err != nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn().Err(err).Msg("tracing: spans not exported")
	}))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	endpoint := "http://localhost:4318/v1/traces"
	if o := endpointURL(getenv); o != "" {
		endpoint = o
	}
	log.Info().Str("endpoint", endpoint).Str("sampler", getenv("OTEL_TRACES_SAMPLER")).Msg("tracing on: spans exported over OTLP/HTTP")
	return &Tracing{Tracer: tp.Tracer(ScopeName, trace.WithInstrumentationVersion(version)), provider: tp}, nil
}

// Shutdown exports the spans still batched and stops the provider, within ctx: spans not sent by then are lost.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil || t.provider == nil {
		return nil
	}
	if err := t.provider.Shutdown(ctx); err != nil {
		return fmt.Errorf("tracing: shutdown: %w", err)
	}
	return nil
}

// ShutdownWithin is Shutdown bounded by timeout (the hub's shutdown_timeout), logging a failure: the hub's exit
// does not wait longer for a collector that does not answer.
func (t *Tracing) ShutdownWithin(timeout time.Duration, log zerolog.Logger) {
	if !t.Enabled() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := t.Shutdown(ctx); err != nil {
		log.Warn().Err(err).Msg("spans not exported before shutdown")
	}
}

// endpointURL is where spans go by the OTLP variables as getenv answers them: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as
// it is, else OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces added, else "" (the exporter's default).
func endpointURL(getenv func(string) string) string {
	if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")); v != "" {
		return v
	}
	if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")); v != "" {
		return strings.TrimSuffix(v, "/") + "/v1/traces"
	}
	return ""
}

// endpointOptions gives the exporter the endpoint read through getenv (the hub's environment, which tests
// replace); the exporter reads the other OTEL_EXPORTER_OTLP_* variables from the process's environment itself.
func endpointOptions(getenv func(string) string) []otlptracehttp.Option {
	if u := endpointURL(getenv); u != "" {
		return []otlptracehttp.Option{otlptracehttp.WithEndpointURL(u)}
	}
	return nil
}
