package config

import (
	"flag"
	"io"
	"testing"
)

// tracing.enabled is off by default and HUB_TRACING_ENABLED turns it on; the OTEL_* variables that configure the
// exporter are not the hub's to check, so a list naming them passes the unknown-variable check.
func TestTracingConfig(t *testing.T) {
	load := func(env map[string]string) (Config, error) {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		return Load(fs, nil, func(k string) string { return env[k] })
	}
	cfg, err := load(nil)
	if err != nil || cfg.Tracing.Enabled {
		t.Fatalf("defaults: tracing.enabled = %v (%v), want false", cfg.Tracing.Enabled, err)
	}
	env := map[string]string{"HUB_TRACING_ENABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318",
		"OTEL_SERVICE_NAME": "hub-a", EnvListKey: "HUB_TRACING_ENABLED\nOTEL_EXPORTER_OTLP_ENDPOINT\nOTEL_SERVICE_NAME"}
	cfg, err = load(env)
	if err != nil || !cfg.Tracing.Enabled {
		t.Fatalf("HUB_TRACING_ENABLED=true: tracing.enabled = %v (%v), want true", cfg.Tracing.Enabled, err)
	}
	if err := CheckEnvNames(func(k string) string { return env[k] }); err != nil {
		t.Errorf("CheckEnvNames with OTEL_* listed: %v, want none refused", err)
	}
	env[EnvListKey] += "\nHUB_TRACING_ENABLE"
	if err := CheckEnvNames(func(k string) string { return env[k] }); err == nil {
		t.Errorf("CheckEnvNames with HUB_TRACING_ENABLE listed: nil, want it refused")
	}
}
