package config

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// loadSources calls LoadFlags as config check does.
func loadSources(t *testing.T, env map[string]string, args ...string) (Config, Sources, error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return LoadFlags(fs, args, func(k string) string { return env[k] }, AllFlags)
}

// Each mistake in a file is told in the file's words: its path, the line, the key as config.yaml spells it, and the
// value as written, never a Go type.
func TestConfigFileMessages(t *testing.T) {
	for _, c := range []struct {
		name, yaml string
		want       string // the whole line after "<path>: "
	}{
		{"unknown key", "listen: 127.0.0.1:1\nredis:\n  ulr: redis://x:6379/0\n",
			"line 3: unknown key redis.ulr (did you mean redis.url?)"},
		{"unknown top-level key", "\nlisen: :1\n", "line 2: unknown key lisen (did you mean listen?)"},
		{"no near key", "redis:\n  colour: blue\n", "line 2: unknown key redis.colour"},
		{"duration without a unit", "sse:\n  heartbeat: 15\n", `line 2: sse.heartbeat: "15" needs a unit, e.g. 15s`},
		{"quoted duration without a unit", "sse:\n  heartbeat: \"15\"\n", `line 2: sse.heartbeat: "15" needs a unit, e.g. 15s`},
		{"not a duration", "shutdown_timeout: soon\n", `line 1: shutdown_timeout: "soon" is not a duration, e.g. 15s, 500ms or 1m30s`},
		{"not a number", "limits:\n  max_connections: many\n", `line 2: limits.max_connections: "many" is not a number`},
		{"same start", "limits:\n  max_conns: 5\n", "line 2: unknown key limits.max_conns (did you mean limits.max_connections?)"},
		{"not a whole number", "history:\n  max_len: 1.5\n", `line 2: history.max_len: "1.5" is not a whole number`},
		{"not a bool", "h2c: maybe\n", `line 1: h2c: "maybe" is not true or false`},
		{"a quoted bool", "h2c: \"true\"\n", `line 1: h2c: "true" is quoted (or tagged), which makes it text: write true`},
		{"a quoted number", "history:\n  max_len: '100'\n", `line 2: history.max_len: "100" is quoted (or tagged), which makes it text: write 100`},
		{"out of range", "history:\n  max_len: 99999999999999999999\n", `line 2: history.max_len: "99999999999999999999" is out of range`},
		{"list for a value", "listen: [a, b]\n", "line 1: listen: wants a single value, not a list"},
		{"value for a section", "redis: localhost\n", "line 1: redis: wants keys and values, not a single value"},
		{"in a list of sections", "workflows:\n  rules:\n    - topics: build.*\n      stall_afer: 5m\n",
			"line 4: unknown key workflows.rules[0].stall_afer (did you mean workflows.rules[0].stall_after?)"},
		{"in a map of grants", "auth:\n  roles:\n    ops:\n      subscrib: ['a.*']\n",
			"line 4: unknown key auth.roles.ops.subscrib (did you mean auth.roles.ops.subscribe?)"},
		{"not a mapping", "- listen\n", "line 1: the file must hold keys and values (listen: ..., redis: ...), not a list"},
		{"bad yaml", "listen: a\n  redis: b\n", "line 2: mapping values are not allowed in this context"},
		{"a key twice", "sse:\n  retry: 1s\n  retry: 2s\n", "line 3: sse.retry is given twice (first on line 2)"},
		{"a role twice", "auth:\n  roles:\n    ops: {}\n    ops: {}\n", "line 4: auth.roles.ops is given twice (first on line 3)"},
		// An alias to the mapping that holds it is a loop the YAML parser takes: refused, not walked until the stack
		// runs out (the hub died of that).
		{"merge of itself", "sse: &s {<<: *s}\n", "line 1: sse.<<: *s names a mapping or list that holds it (a loop)"},
		{"merge list with itself", "sse: &s\n  heartbeat: 2s\n  <<: [*s]\n", "line 3: sse.<<: *s names a mapping or list that holds it (a loop)"},
		{"list holding itself", "workflows: &w {rules: [*w]}\n", "line 1: workflows.rules[0]: *w names a mapping or list that holds it (a loop)"},
		{"the file holding itself", "&f {sse: *f}\n", "line 1: sse: *f names a mapping or list that holds it (a loop)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := cfgFile(t, c.yaml)
			_, err := cfgLoad(t, nil, "--config", path)
			if want := path + ": " + c.want; err == nil || err.Error() != want {
				t.Errorf("Load(%q) = %v\nwant %s", c.yaml, err, want)
			}
		})
	}
}

// A file with several mistakes has them all reported at once, each on its line, in the file's order.
func TestConfigFileReportsEveryProblem(t *testing.T) {
	path := cfgFile(t, "listen: 127.0.0.1:1\nredis:\n  ulr: redis://x/0\nsse:\n  heartbeat: \"15\"\nlimits:\n  max_connections: many\n")
	_, err := cfgLoad(t, nil, "--config", path)
	want := []string{
		path + ": line 3: unknown key redis.ulr (did you mean redis.url?)",
		path + `: line 5: sse.heartbeat: "15" needs a unit, e.g. 15s`,
		path + `: line 7: limits.max_connections: "many" is not a number`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Fatalf("Load(3 mistakes) = %v\nwant\n%s", err, strings.Join(want, "\n"))
	}
}

// Anchors, merge keys and null values are YAML the strict decoder takes; the check takes them too.
func TestConfigFileYAMLFeatures(t *testing.T) {
	path := cfgFile(t, "base: &b\n  heartbeat: 2s\nsse:\n  <<: *b\n  retry: 4s\nlog:\n  level: ~\n")
	_, err := cfgLoad(t, nil, "--config", path)
	if err == nil || !strings.Contains(err.Error(), "unknown key base") {
		t.Fatalf("Load(anchor under an unknown key) = %v, want only base refused", err)
	}
	path = cfgFile(t, "x-defaults: &b\n  heartbeat: 2s\n")
	if _, err := cfgLoad(t, nil, "--config", path); err == nil || strings.Contains(err.Error(), "heartbeat") {
		t.Fatalf("Load = %v, want only x-defaults refused", err)
	}
	path = cfgFile(t, "sse: &s\n  heartbeat: 2s\n  retry: 4s\nlog:\n  level: ~\n")
	cfg, err := cfgLoad(t, nil, "--config", path)
	if err != nil || cfg.SSE.Heartbeat != 2*time.Second || cfg.Log.Level != "info" {
		t.Fatalf("Load(anchor, null) = heartbeat %v, level %q, %v; want 2s, the default info, nil", cfg.SSE.Heartbeat, cfg.Log.Level, err)
	}
}

// Aliases of aliases that multiply stop at maxAliases, reported once with every other problem, each said once
// however often the aliases repeat it (loops are in TestConfigFileMessages).
func TestConfigFileAliasBomb(t *testing.T) {
	lines := []string{"sse: &a0 {heartbeat: 2s}"}
	for i, section := range []string{"log", "redis", "history", "limits", "auth", "notify", "workflows", "metrics", "web"} {
		lines = append(lines, fmt.Sprintf("%s: &a%d {<<: [%s]}", section, i+1, strings.Repeat(fmt.Sprintf("*a%d, ", i), 8)+fmt.Sprintf("*a%d", i)))
	}
	path := cfgFile(t, strings.Join(lines, "\n")+"\n")
	_, err := cfgLoad(t, nil, "--config", path)
	if err == nil {
		t.Fatal("Load(9^9 aliases) = nil, want refused")
	}
	said := strings.Split(err.Error(), "\n")
	if !slices.ContainsFunc(said, func(l string) bool {
		return strings.HasSuffix(l, "the file expands more than 1000, its aliases nest too deep")
	}) {
		t.Errorf("Load(9^9 aliases) said\n%s\nwant the aliases' limit named", err)
	}
	if len(said) > 20 || !slices.Contains(said, path+": line 1: unknown key log.heartbeat") {
		t.Errorf("Load(9^9 aliases) said %d lines, want each problem once (log.heartbeat among them):\n%s", len(said), err)
	}
}

// Sources names where each value came from: the default, the file's line, the variable, or the flag.
func TestConfigSources(t *testing.T) {
	path := cfgFile(t, "listen: 127.0.0.1:1\nsse:\n  heartbeat: 5s\n  retry: 4s\n")
	env := map[string]string{"HUB_SSE_HEARTBEAT": "2s", "HUB_REDIS_PREFIX": "p"}
	cfg, src, err := loadSources(t, env, "--config", path, "--redis-url", "redis://127.0.0.1:1/0")
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"listen":           "file " + path + ":1",
		"sse.retry":        "file " + path + ":4",
		"sse.heartbeat":    "environment HUB_SSE_HEARTBEAT",
		"redis.prefix":     "environment HUB_REDIS_PREFIX",
		"redis.url":        "flag --redis-url",
		"shutdown_timeout": "default",
	} {
		if got := src.Of(key); got != want {
			t.Errorf("Sources.Of(%s) = %q, want %q", key, got, want)
		}
	}
	if cfg.SSE.Heartbeat != 2*time.Second {
		t.Errorf("sse.heartbeat = %v, want 2s from the environment over the file's 5s", cfg.SSE.Heartbeat)
	}
}

// A secret may come from the file its _FILE variable names, without the file's final newline; both forms at once,
// an unreadable file and an empty one are errors that name the variable and the path.
func TestConfigSecretFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	env := map[string]string{
		"HUB_AUTH_HMAC_SECRET_FILE":      write("hmac", "s3cret-from-file\n"),
		"HUB_REDIS_URL_FILE":             write("redis", "redis://:pw@127.0.0.1:6379/2\r\n"),
		"HUB_NOTIFY_WEBHOOK_URL_FILE":    write("hook", "https://hooks.example/T0/B0/xyz"),
		"HUB_NOTIFY_WEBHOOK_SECRET_FILE": write("hooksecret", "whsec\n\n"),
	}
	cfg, src, err := loadSources(t, env)
	if err != nil {
		t.Fatalf("Load(_FILE variables) = %v", err)
	}
	for _, c := range []struct{ key, got, want string }{
		{"auth.hmac_secret", cfg.Auth.HMACSecret, "s3cret-from-file"},
		{"redis.url", cfg.Redis.URL, "redis://:pw@127.0.0.1:6379/2"},
		{"notify.webhook.url", cfg.Notify.Webhook.URL, "https://hooks.example/T0/B0/xyz"},
		{"notify.webhook.secret", cfg.Notify.Webhook.Secret, "whsec\n"}, // one newline trimmed, no more
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.key, c.got, c.want)
		}
	}
	if got, want := src.Of("auth.hmac_secret"), "file "+env["HUB_AUTH_HMAC_SECRET_FILE"]+" (HUB_AUTH_HMAC_SECRET_FILE)"; got != want {
		t.Errorf("Sources.Of(auth.hmac_secret) = %q, want %q", got, want)
	}

	for _, c := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"both", map[string]string{"HUB_AUTH_HMAC_SECRET": "x", "HUB_AUTH_HMAC_SECRET_FILE": env["HUB_AUTH_HMAC_SECRET_FILE"]},
			"HUB_AUTH_HMAC_SECRET and HUB_AUTH_HMAC_SECRET_FILE are both set: keep one"},
		{"missing", map[string]string{"HUB_REDIS_URL_FILE": filepath.Join(dir, "nope")},
			"HUB_REDIS_URL_FILE: cannot read " + filepath.Join(dir, "nope") + ": no such file or directory"},
		{"a directory", map[string]string{"HUB_AUTH_HMAC_SECRET_FILE": dir},
			"HUB_AUTH_HMAC_SECRET_FILE: cannot read " + dir + ": is a directory"},
		{"empty", map[string]string{"HUB_NOTIFY_WEBHOOK_SECRET_FILE": write("empty", "\n")},
			"HUB_NOTIFY_WEBHOOK_SECRET_FILE: " + filepath.Join(dir, "empty") + " is empty"},
	} {
		if _, err := cfgLoad(t, c.env); err == nil || err.Error() != c.want {
			t.Errorf("Load(%s) = %v\nwant %s", c.name, err, c.want)
		}
	}
}

// The _FILE variables are known to the unknown-variable check; the _FILE form of a setting that is no secret is not.
func TestConfigSecretFileNamesAreKnown(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s")
	if err := os.WriteFile(p, []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HUB_AUTH_HMAC_SECRET_FILE": p, EnvListKey: "HUB_AUTH_HMAC_SECRET_FILE"}
	if _, err := cfgLoad(t, env); err != nil {
		t.Errorf("Load(HUB_AUTH_HMAC_SECRET_FILE) = %v, want it known", err)
	}
	env = map[string]string{"HUB_LISTEN_FILE": p, EnvListKey: "HUB_LISTEN_FILE"}
	cfgErrHas(t, "Load(HUB_LISTEN_FILE)", func() error { _, err := cfgLoad(t, env); return err }(), "HUB_LISTEN_FILE: unknown variable")
}

// Describe shows every key with its value and source, and no secret: not the HMAC secret, not a Redis password,
// not a webhook's secret or the path of its URL.
func TestConfigDescribeMasksSecrets(t *testing.T) {
	path := cfgFile(t, "notify:\n  webhooks:\n    - url: https://hooks.example/T0/B0/hookpath1\n      secret: hooksecret1\n")
	env := map[string]string{
		"HUB_AUTH_HMAC_SECRET":   "hmacsecret1",
		"HUB_REDIS_URL":          "redis://user:redispw1@127.0.0.1:6379/0?password=redispw2",
		"HUB_NOTIFY_WEBHOOK_URL": "https://hooks.example/T1/B1/hookpath2", "HUB_NOTIFY_WEBHOOK_SECRET": "hooksecret2",
		"HUB_AUTH_JWKS_URL": "https://idp:jwkspw1@idp.example/keys", "HUB_AUTH_AUDIENCE": "hub",
	}
	cfg, src, err := loadSources(t, env, "--config", path)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := cfg.Describe(&out, src); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"hmacsecret1", "redispw1", "redispw2", "hookpath1", "hookpath2", "hooksecret1", "hooksecret2", "jwkspw1"} {
		if strings.Contains(out.String(), secret) {
			t.Errorf("Describe shows %q:\n%s", secret, out.String())
		}
	}
	for _, line := range []string{
		`auth.hmac_secret\s+\*{8}\s+environment HUB_AUTH_HMAC_SECRET`,
		`redis.url\s+redis://127.0.0.1:6379/0\s+environment HUB_REDIS_URL`,
		`notify.webhook.url\s+https://hooks.example/\*{8}\s+environment HUB_NOTIFY_WEBHOOK_URL`,
		`notify.webhooks\s+\[\{url: .https://hooks.example/\*{8}., secret: .\*{8}..*\}\]\s+file ` + path + `:3`,
		`sse.heartbeat\s+15s\s+default`,
		`auth.anonymous\s+\(unset\)\s+default`,
	} {
		if !matchLine(out.String(), line) {
			t.Errorf("Describe has no line matching %s:\n%s", line, out.String())
		}
	}
}

// matchLine is true when some line of text matches the regular expression re as a whole.
func matchLine(text, re string) bool {
	return regexp.MustCompile(`(?m)^` + re + `\s*$`).MatchString(text)
}

// Whatever a file holds, Load never panics and never answers in the decoder's words (Go types, YAML tags): a
// problem the key-by-key check missed would surface that way.
func FuzzConfigFile(f *testing.F) {
	for _, seed := range []string{
		"listen: 127.0.0.1:1\n", "redis:\n  ulr: x\n", "sse:\n  heartbeat: 15\n", "limits:\n  max_connections: many\n",
		"workflows:\n  rules:\n    - topics: a.*\n      stall_after: 5m\n", "auth:\n  roles:\n    ops:\n      subscribe: [a]\n",
		"notify:\n  webhooks:\n    - url: https://x\n      kinds: [failed]\n", "auth:\n  anonymous: true\n", "a: &x 1\nb: *x\n",
		"sse: &s {heartbeat: 2s}\nlog: {<<: *s}\n", "sse: &s {<<: *s}\n", "history:\n  max_len: 0x10\n", "limits:\n  publish_rate: .inf\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, content string) {
		p := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg := Default()
		err := LoadFile(&cfg, p)
		if err == nil {
			return
		}
		said := strings.ReplaceAll(err.Error(), p, "FILE")
		for _, goWords := range []string{"cannot unmarshal", "already defined", "config.Config", "time.Duration", "[]string", "yaml: "} {
			if strings.Contains(said, goWords) {
				t.Fatalf("LoadFile(%q) = %q: %q is not the file's words", content, err, goWords)
			}
		}
	})
}
