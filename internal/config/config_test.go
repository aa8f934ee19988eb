package config

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// cfgLoad calls Load as a command does, with env as the only environment.
func cfgLoad(t *testing.T, env map[string]string, args ...string) (Config, error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return Load(fs, args, func(k string) string { return env[k] })
}

// cfgFile writes a config file for the test and returns its path.
func cfgFile(t *testing.T, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// cfgErrHas fails unless err mentions every one of want.
func cfgErrHas(t *testing.T, call string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s = nil error, want one naming %q", call, want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s error %q does not mention %q", call, err, w)
		}
	}
}

func TestConfigDefaultsAreValid(t *testing.T) {
	def := Default()
	if err := def.Validate(); err != nil {
		t.Fatalf("Default().Validate() = %v, want nil", err)
	}
	cfg, err := cfgLoad(t, nil)
	if err != nil || !reflect.DeepEqual(cfg, def) {
		t.Errorf("Load with no file, variable or flag = %+v, %v; want the defaults %+v", cfg, err, def)
	}
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"listen", def.Listen, "127.0.0.1:8080"},
		{"redis.url", def.Redis.URL, ""},
		{"redis.embedded_addr", def.Redis.EmbeddedAddr, "127.0.0.1:6380"},
		{"redis.prefix", def.Redis.Prefix, "hub"},
		{"sse.heartbeat", def.SSE.Heartbeat, 15 * time.Second},
		{"sse.client_buffer", def.SSE.ClientBuffer, 256},
		{"sse.retry", def.SSE.Retry, 3 * time.Second},
		{"history.max_len", def.History.MaxLen, int64(10000)},
		{"limits.max_event_bytes", def.Limits.MaxEventBytes, 64 << 10},
		{"limits.max_topics_per_stream", def.Limits.MaxTopicsPerStream, 32},
		{"shutdown_timeout", def.ShutdownTimeout, 10 * time.Second},
		{"log.format", def.Log.Format, "json"},
	} {
		if c.got != c.want {
			t.Errorf("default %s = %v, want %v (config.yaml documents it)", c.name, c.got, c.want)
		}
	}
}

func TestConfigFile(t *testing.T) {
	path := cfgFile(t, `
listen: 0.0.0.0:9000
sse:
  heartbeat: 2s
  client_buffer: 16
history:
  max_age: 1h
limits:
  max_replay: 5
log:
  format: console
`)
	cfg, err := cfgLoad(t, nil, "--config", path)
	if err != nil {
		t.Fatalf("Load(--config %s) = %v", path, err)
	}
	want := Default()
	want.Listen, want.SSE.Heartbeat, want.SSE.ClientBuffer = "0.0.0.0:9000", 2*time.Second, 16
	want.History.MaxAge, want.Limits.MaxReplay, want.Log.Format = time.Hour, 5, "console"
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("Load(--config) = %+v, want %+v", cfg, want)
	}

	// HUB_CONFIG names the file too; --config wins over it.
	if cfg, err := cfgLoad(t, map[string]string{"HUB_CONFIG": path}); err != nil || cfg.Listen != "0.0.0.0:9000" {
		t.Errorf("HUB_CONFIG=%s: listen %q, %v; want 0.0.0.0:9000 from the file", path, cfg.Listen, err)
	}
	other := cfgFile(t, "listen: 127.0.0.1:1\n")
	if cfg, err := cfgLoad(t, map[string]string{"HUB_CONFIG": path}, "--config", other); err != nil || cfg.Listen != "127.0.0.1:1" {
		t.Errorf("HUB_CONFIG and --config: listen %q, %v; want 127.0.0.1:1 from --config", cfg.Listen, err)
	}

	for _, empty := range []string{"", "# only a comment\n"} {
		if cfg, err := cfgLoad(t, nil, "--config", cfgFile(t, empty)); err != nil || !reflect.DeepEqual(cfg, Default()) {
			t.Errorf("an empty config file (%q): %v; want the defaults", empty, err)
		}
	}
}

func TestConfigFileIsStrict(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"unknown top-level key", "lisen: 1.2.3.4:5\n", "lisen"},
		{"unknown nested key", "sse:\n  heartbeet: 2s\n", "heartbeet"},
		{"a duration without unit", "sse:\n  heartbeat: 15\n", "line 2"},
		{"a bad duration", "sse:\n  retry: soon\n", "soon"},
		{"a string for a number", "sse:\n  client_buffer: many\n", "many"},
		{"not YAML", "sse: [\n", "config"},
	}
	for _, c := range cases {
		path := cfgFile(t, c.yaml)
		_, err := cfgLoad(t, nil, "--config", path)
		cfgErrHas(t, c.name+": Load(--config)", err, c.want, path)
	}
	_, err := cfgLoad(t, nil, "--config", filepath.Join(t.TempDir(), "missing.yaml"))
	cfgErrHas(t, "Load(--config missing.yaml)", err, "missing.yaml")
}

func TestConfigEnvironment(t *testing.T) {
	path := cfgFile(t, "sse:\n  heartbeat: 5s\n  retry: 7s\nlisten: file:1\n")
	env := map[string]string{
		"HUB_SSE_HEARTBEAT":          "2s", // over the file's 5s
		"HUB_SSE_CLIENT_BUFFER":      "7",
		"HUB_HISTORY_MAX_LEN":        "99",
		"HUB_HISTORY_MAX_AGE":        "90m",
		"HUB_REDIS_URL":              "redis://example:6379/1",
		"HUB_REDIS_PREFIX":           "p",
		"HUB_LOG_LEVEL":              "debug",
		"HUB_LOG_FORMAT":             "console",
		"HUB_LIMITS_MAX_EVENT_BYTES": "1024",
		"HUB_LIMITS_MAX_BODY_BYTES":  "2048",
		"HUB_SHUTDOWN_TIMEOUT":       "3s",
		"HUB_SSE_DETACH":             "false",
		"HUB_SOMETHING_UNKNOWN":      "ignored",
	}
	cfg, err := cfgLoad(t, env, "--config", path)
	if err != nil {
		t.Fatalf("Load with %v: %v", env, err)
	}
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"sse.heartbeat (env over file)", cfg.SSE.Heartbeat, 2 * time.Second},
		{"sse.retry (file, no env)", cfg.SSE.Retry, 7 * time.Second},
		{"listen (file)", cfg.Listen, "file:1"},
		{"sse.client_buffer", cfg.SSE.ClientBuffer, 7},
		{"history.max_len", cfg.History.MaxLen, int64(99)},
		{"history.max_age", cfg.History.MaxAge, 90 * time.Minute},
		{"redis.url", cfg.Redis.URL, "redis://example:6379/1"},
		{"redis.prefix", cfg.Redis.Prefix, "p"},
		{"log.level", cfg.Log.Level, "debug"},
		{"log.format", cfg.Log.Format, "console"},
		{"limits.max_event_bytes", cfg.Limits.MaxEventBytes, 1024},
		{"shutdown_timeout", cfg.ShutdownTimeout, 3 * time.Second},
		{"sse.detach", cfg.SSE.Detach, false},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	names := EnvNames()
	for _, n := range []string{"HUB_LISTEN", "HUB_REDIS_URL", "HUB_SSE_HEARTBEAT", "HUB_SSE_CLIENT_BUFFER", "HUB_LOG_LEVEL", "HUB_HISTORY_MAX_AGE"} {
		if !slices.Contains(names, n) {
			t.Errorf("EnvNames() lacks %s", n)
		}
	}
}

func TestConfigEnvironmentReportsEveryBadValue(t *testing.T) {
	env := map[string]string{
		"HUB_SSE_HEARTBEAT":     "soon",
		"HUB_SSE_CLIENT_BUFFER": "many",
		"HUB_HISTORY_MAX_LEN":   "1.5",
		"HUB_SHUTDOWN_TIMEOUT":  "10",  // a duration needs its unit
		"HUB_LISTEN":            ":80", // fine
	}
	_, err := cfgLoad(t, env)
	cfgErrHas(t, "Load with 4 bad variables", err, "HUB_SSE_HEARTBEAT", "soon", "HUB_SSE_CLIENT_BUFFER", "HUB_HISTORY_MAX_LEN", "HUB_SHUTDOWN_TIMEOUT")

	// A bad file and a bad variable are reported together.
	path := cfgFile(t, "sse:\n  heartbeet: 2s\n")
	_, err = cfgLoad(t, map[string]string{"HUB_SSE_RETRY": "later"}, "--config", path)
	cfgErrHas(t, "Load with a bad file and a bad variable", err, "heartbeet", "HUB_SSE_RETRY")
}

func TestConfigFlagsOverrideEnvironment(t *testing.T) {
	path := cfgFile(t, "listen: file:1\nredis:\n  url: redis://file:1/0\n")
	env := map[string]string{"HUB_LISTEN": "env:2", "HUB_REDIS_URL": "redis://env:2/0"}
	cfg, err := cfgLoad(t, env, "--config", path, "--listen", "flag:3", "--redis-url", "redis://flag:3/0")
	if err != nil || cfg.Listen != "flag:3" || cfg.Redis.URL != "redis://flag:3/0" {
		t.Errorf("file, env and flags: listen %q, redis.url %q, %v; want the flags' flag:3", cfg.Listen, cfg.Redis.URL, err)
	}
	cfg, err = cfgLoad(t, env, "--config", path)
	if err != nil || cfg.Listen != "env:2" || cfg.Redis.URL != "redis://env:2/0" {
		t.Errorf("file and env: listen %q, redis.url %q, %v; want env:2", cfg.Listen, cfg.Redis.URL, err)
	}
	// A flag set to a value that is invalid still goes through validate.
	_, err = cfgLoad(t, map[string]string{"HUB_LOG_FORMAT": "xml"}, "--listen", "flag:3")
	cfgErrHas(t, "Load(HUB_LOG_FORMAT=xml, --listen)", err, "log.format")
}

func TestConfigCommandLine(t *testing.T) {
	if _, err := cfgLoad(t, nil, "--no-such-flag"); !errors.Is(err, ErrUsage) {
		t.Errorf("Load(--no-such-flag) = %v, want ErrUsage", err)
	}
	if _, err := cfgLoad(t, nil, "-h"); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("Load(-h) = %v, want flag.ErrHelp", err)
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	demo := fs.Bool("demo", false, "")
	if _, err := Load(fs, []string{"--demo"}, func(string) string { return "" }); err != nil || !*demo {
		t.Errorf("Load with a command's own flag --demo: %v, demo=%v; want it parsed", err, *demo)
	}
}

func TestConfigValidateReportsEveryProblem(t *testing.T) {
	cfg := Default()
	cfg.Listen = ""
	cfg.SSE.Heartbeat = time.Millisecond
	cfg.SSE.ClientBuffer = 0
	cfg.History.MaxLen = 0
	cfg.History.MaxAge = -time.Second
	cfg.Limits.MaxEventBytes = 10
	cfg.Limits.MaxHistoryQuery = 2000
	cfg.Log.Format = "xml"
	err := cfg.Validate()
	cfgErrHas(t, "Validate() of 8 bad values", err, "listen", "sse.heartbeat", "sse.client_buffer", "history.max_len",
		"history.max_age", "limits.max_event_bytes", "limits.max_history_query", "log.format")
	if n := len(strings.Split(err.Error(), "\n")); n < 8 {
		t.Errorf("Validate() reported %d problems, want each of the 8 on its own line:\n%v", n, err)
	}

	cfg = Default()
	cfg.Limits.MaxBodyBytes = cfg.Limits.MaxEventBytes - 1
	cfgErrHas(t, "Validate() with max_body_bytes < max_event_bytes", cfg.Validate(), "limits.max_body_bytes")
}

func TestConfigValidateRejectsAnUnknownLogLevel(t *testing.T) {
	_, err := cfgLoad(t, map[string]string{"HUB_LOG_LEVEL": "verbose"})
	cfgErrHas(t, "Load(HUB_LOG_LEVEL=verbose)", err, "log.level")
}
