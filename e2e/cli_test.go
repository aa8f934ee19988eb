package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/syncverse/hub/e2e/hubtest"
)

// The commands every `hub help` lists; other commands may join them.
var listedCommands = []string{"serve", "publish", "watch", "topics", "history", "demo", "healthcheck", "token", "config check", "version", "help"}

func TestCLIHelpVersionAndErrors(t *testing.T) {
	version := `^hub \S+ go\S+ \w+/\w+ revision \S+\n$`
	for _, c := range []struct {
		args       []string
		code       int
		stdout     []string // regular expressions the output must match
		stderr     []string
		noStdout   bool
		stderrNone bool
	}{
		{args: []string{"--help"}, stdout: []string{`(?m)^Commands:$`, `(?m)^  publish +publish one event`}, stderrNone: true},
		{args: []string{"-h"}, stdout: []string{`(?m)^  config check +validate the configuration`}, stderrNone: true},
		{args: []string{"help"}, stdout: []string{`(?m)^  serve +run the hub \(the default command\)$`}, stderrNone: true},
		{args: []string{"--version"}, stdout: []string{version}, stderrNone: true},
		{args: []string{"version"}, stdout: []string{version}, stderrNone: true},
		{args: []string{"help", "publish"}, stdout: []string{`^Usage: hub publish --topic T`, `(?m)^  --topic STRING$`, `(?m)^Example:\n  hub publish --topic demo`}, stderrNone: true},
		{args: []string{"publish", "-h"}, stdout: []string{`^Usage: hub publish --topic T`}, stderrNone: true},
		{args: []string{"help", "config", "check"}, stdout: []string{`^Usage: hub config check \[--config FILE\]`}, stderrNone: true},
		{args: []string{"publish", "extra"}, code: 2, noStdout: true,
			stderr: []string{`^hub publish: unexpected argument "extra" \(flags only; run "hub publish -h" for help\)\n$`}},
		{args: []string{"serve", "--listen", "127.0.0.1:0", "extra"}, code: 2, noStdout: true,
			stderr: []string{`^hub serve: unexpected argument "extra" \(flags only; run "hub serve -h" for help\)\n$`}},
		{args: []string{"config", "check", "x"}, code: 2, noStdout: true, stderr: []string{`^hub config check: unexpected argument "x"`}},
		{args: []string{"version", "x"}, code: 2, noStdout: true, stderr: []string{`^hub version: unexpected argument "x"`}},
		{args: []string{"bench", "--scenario", "fanout"}, code: 2, noStdout: true, stderr: []string{`^hub: bench is a command of its own now: go run ./cmd/hub-bench \(BENCHMARKS.md\)\n$`}},
		{args: []string{"dispatch-test"}, code: 2, noStdout: true, stderr: []string{`^hub: dispatch-test is a command of its own now: go run ./cmd/dispatch-test\n$`}},
		{args: []string{"publish", "--bogus"}, code: 2, noStdout: true,
			stderr: []string{`^flag provided but not defined: -bogus\n`, `(?m)^Usage: hub publish --topic T`}},
		{args: []string{"bogus"}, code: 2, noStdout: true, stderr: []string{`^hub: unknown command "bogus"\n`, `(?m)^  healthcheck +exit 0 when`}},
		{args: []string{"help", "bogus"}, code: 2, noStdout: true, stderr: []string{`^hub help: unknown command "bogus"\n`, `(?m)^Commands:$`}},
		{args: []string{"config"}, code: 2, noStdout: true, stderr: []string{`^hub: "config" needs a subcommand: config check\n`, `(?m)^  config check `}},
		{args: []string{"config", "chek"}, code: 2, noStdout: true, stderr: []string{`^hub: unknown command "config chek"\n`}},
		{args: []string{"help", "publish", "x"}, code: 2, noStdout: true, stderr: []string{`^hub help: unknown command "publish x"\n`}},
	} {
		code, stdout, stderr := hubtest.CLI(t, nil, c.args...)
		if code != c.code {
			t.Errorf("hub %v: exit %d, want %d\nstdout: %s\nstderr: %s", c.args, code, c.code, stdout, stderr)
		}
		for _, re := range c.stdout {
			if !regexp.MustCompile(re).MatchString(stdout) {
				t.Errorf("hub %v: stdout does not match %s:\n%s", c.args, re, stdout)
			}
		}
		for _, re := range c.stderr {
			if !regexp.MustCompile(re).MatchString(stderr) {
				t.Errorf("hub %v: stderr does not match %s:\n%s", c.args, re, stderr)
			}
		}
		if c.noStdout && stdout != "" {
			t.Errorf("hub %v: stdout %q, want nothing (errors go to stderr)", c.args, stdout)
		}
		if c.stderrNone && stderr != "" {
			t.Errorf("hub %v: stderr %q, want nothing", c.args, stderr)
		}
	}
}

// `hub help` lists every command with one line, and each command's help has the one format: a usage line, what it
// does, only its own flags, and an example; `hub help NAME` and `hub NAME -h` print the same.
func TestCLIEveryCommandHasTheSameHelp(t *testing.T) {
	_, list, _ := hubtest.CLI(t, nil, "help")
	for _, name := range listedCommands {
		if !regexp.MustCompile(`(?m)^  ` + name + ` +\S.*$`).MatchString(list) {
			t.Errorf("hub help does not list %q with a line of its own:\n%s", name, list)
		}
	}
	for _, cmd := range commands() {
		words := strings.Fields(cmd.name)
		code, help, stderr := hubtest.CLI(t, nil, append([]string{"help"}, words...)...)
		if code != 0 || stderr != "" {
			t.Errorf("hub help %s: exit %d, stderr %q; want 0 and nothing", cmd.name, code, stderr)
		}
		form := `^Usage: hub ` + regexp.QuoteMeta(cmd.name) + `.*\n\n[A-Z].+\n(?s:.*)\nExample:\n(  .*hub .+\n)+$`
		if !regexp.MustCompile(form).MatchString(help) {
			t.Errorf("hub help %s =\n%s\nwant the form %s", cmd.name, help, form)
		}
		code, dashH, _ := hubtest.CLI(t, nil, append(words, "-h")...)
		if code != 0 || dashH != help {
			t.Errorf("hub %s -h: exit %d and\n%s\nwant 0 and what hub help %s prints:\n%s", cmd.name, code, dashH, cmd.name, help)
		}
	}
	// Every command takes flags only: a stray argument is named, with where to look (help takes a command name).
	for _, cmd := range commands() {
		if cmd.name == "help" {
			continue
		}
		args := append(strings.Fields(cmd.name), "stray-arg")
		code, _, stderr := hubtest.CLI(t, nil, args...)
		want := `hub ` + cmd.name + `: unexpected argument "stray-arg" (flags only; run "hub ` + cmd.name + ` -h" for help)`
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("hub %v: exit %d, stderr %q; want 2 and %q", args, code, stderr, want)
		}
	}
	// Only the command's own flags: publish has no --listen, healthcheck no --redis-url, token neither.
	for _, c := range []struct{ cmd, flag string }{{"publish", "--listen"}, {"healthcheck", "--redis-url"}, {"token", "--listen"}, {"token", "--redis-url"}} {
		if _, help, _ := hubtest.CLI(t, nil, "help", c.cmd); strings.Contains(help, c.flag+" ") {
			t.Errorf("hub help %s lists %s, which is not its flag:\n%s", c.cmd, c.flag, help)
		}
	}
}

// writeFile writes content to name in a directory of the test and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// hub config check prints every key with its value and source, secrets masked, and exits 0; the secret read from
// a _FILE variable shows as masked, from that file.
func TestCLIConfigCheck(t *testing.T) {
	file := writeFile(t, "config.yaml", "listen: 127.0.0.1:9001\nsse:\n  heartbeat: 5s\n")
	secret := writeFile(t, "hmac", "file-secret-0123456789abcdef\n")
	env := map[string]string{
		"HUB_SSE_HEARTBEAT":         "2s",
		"HUB_AUTH_HMAC_SECRET_FILE": secret,
		"HUB_REDIS_URL":             "redis://:redis-password-1@127.0.0.1:6379/0",
	}
	code, stdout, stderr := hubtest.CLI(t, env, "config", "check", "--config", file, "--listen", "127.0.0.1:9002")
	if code != 0 || stderr != "" {
		t.Fatalf("hub config check: exit %d, stderr %q; want 0 and nothing", code, stderr)
	}
	for _, re := range []string{
		`(?m)^KEY +VALUE +FROM$`,
		`(?m)^listen +127\.0\.0\.1:9002 +flag --listen$`,
		`(?m)^sse\.heartbeat +2s +environment HUB_SSE_HEARTBEAT$`,
		`(?m)^sse\.retry +3s +default$`,
		`(?m)^auth\.hmac_secret +\*{8} +file ` + regexp.QuoteMeta(secret) + ` \(HUB_AUTH_HMAC_SECRET_FILE\)$`,
		`(?m)^redis\.url +redis://127\.0\.0\.1:6379/0 +environment HUB_REDIS_URL$`,
		`(?m)^configuration ok\n\z`,
	} {
		if !regexp.MustCompile(re).MatchString(stdout) {
			t.Errorf("hub config check: stdout does not match %s:\n%s", re, stdout)
		}
	}
	for _, s := range []string{"file-secret", "redis-password-1"} {
		if strings.Contains(stdout, s) {
			t.Errorf("hub config check shows the secret %q:\n%s", s, stdout)
		}
	}
	// The file's own line is the source where neither a variable nor a flag overrides it.
	if _, stdout, _ := hubtest.CLI(t, nil, "config", "check", "--config", file); !regexp.MustCompile(`(?m)^sse\.heartbeat +5s +file ` + regexp.QuoteMeta(file) + `:3$`).MatchString(stdout) {
		t.Errorf("hub config check --config: no sse.heartbeat line from %s:3:\n%s", file, stdout)
	}
}

// A bad file: config check and serve say the same, every problem on a line of its own, and exit 1 without starting
// anything. Problems serve would refuse to start with are config check's too.
func TestCLIConfigProblems(t *testing.T) {
	bad := writeFile(t, "config.yaml", "listen: 127.0.0.1:0\nredis:\n  ulr: redis://127.0.0.1:6379/0\nsse:\n  heartbeat: \"15\"\nlimits:\n  max_connections: many\n")
	want := "hub: " + bad + ": line 3: unknown key redis.ulr (did you mean redis.url?)\n" +
		"hub: " + bad + `: line 5: sse.heartbeat: "15" needs a unit, e.g. 15s` + "\n" +
		"hub: " + bad + `: line 7: limits.max_connections: "many" is not a number` + "\n"
	for _, args := range [][]string{{"config", "check", "--config", bad}, {"serve", "--config", bad}, {"--config", bad}} {
		code, stdout, stderr := hubtest.CLI(t, nil, args...)
		if code != 1 || stdout != "" || stderr != want {
			t.Errorf("hub %v: exit %d, stdout %q, stderr\n%s\nwant 1, nothing, and\n%s", args, code, stdout, stderr, want)
		}
	}
	for _, c := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{"HUB_AUTH_HMAC_SECRET": "x", "HUB_AUTH_HMAC_SECRET_FILE": bad}, nil,
			"hub: HUB_AUTH_HMAC_SECRET and HUB_AUTH_HMAC_SECRET_FILE are both set: keep one\n"},
		{map[string]string{"HUB_REDIS_URL_FILE": bad + ".missing"}, nil,
			"hub: HUB_REDIS_URL_FILE: cannot read " + bad + ".missing: no such file or directory\n"},
		{nil, []string{"--listen", "0.0.0.0:9"}, "hub: listen 0.0.0.0:9 is not a loopback address and no auth is configured"},
	} {
		code, _, stderr := hubtest.CLI(t, c.env, append([]string{"config", "check"}, c.args...)...)
		if code != 1 || !strings.HasPrefix(stderr, c.want) {
			t.Errorf("hub config check %v with %v: exit %d, stderr %q; want 1 and %q", c.args, c.env, code, stderr, c.want)
		}
	}
}

// The examples docs/cli.md marks as run by this test run as written (from the repository's root, where config.yaml
// is) and succeed.
func TestCLIDocsExamples(t *testing.T) {
	page := hubtest.ReadFile(t, "docs/cli.md")
	blocks := regexp.MustCompile("(?s)<!-- run by TestCLIDocsExamples -->\n```sh\n(.*?)```").FindAllStringSubmatch(string(page), -1)
	if len(blocks) < 2 {
		t.Fatalf("docs/cli.md has %d examples marked as run by TestCLIDocsExamples, want at least 2", len(blocks))
	}
	for _, b := range blocks {
		for line := range strings.SplitSeq(strings.TrimSpace(b[1]), "\n") {
			args := strings.Fields(line)
			if len(args) == 0 || args[0] != "hub" {
				t.Fatalf("docs/cli.md: %q is not a hub command line this test can run", line)
			}
			if code, stdout, stderr := hubtest.CLI(t, nil, args[1:]...); code != 0 || stdout == "" {
				t.Errorf("docs/cli.md: %s: exit %d, stdout %q, stderr %q; want 0 and output", line, code, stdout, stderr)
			}
		}
	}
}
