package config

import (
	"flag"
	"io"
	"reflect"
	"testing"
)

// The documented config.yaml loads strictly and says exactly what the code's defaults are.
func TestConfigYAMLDocumentsTheDefaults(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	got, err := Load(fs, []string{"--config", "../../config.yaml"}, func(string) string { return "" })
	if err != nil {
		t.Fatalf("Load(config.yaml) = %v", err)
	}
	if want := Default(); !reflect.DeepEqual(got, want) {
		t.Errorf("config.yaml = %+v\nwant the defaults %+v", got, want)
	}
}
