package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/creack/pty"
	"github.com/golang-jwt/jwt/v5"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/pubsub"
)

// onTerminal runs the program with stderr on a pseudo-terminal and returns what the terminal showed and stdout.
func onTerminal(t *testing.T, env map[string]string, args ...string) (screen, stdout string, err error) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("pty.Open: %v", err)
	}
	defer ptmx.Close()
	var shown bytes.Buffer
	read := make(chan struct{})
	go func() { _, _ = io.Copy(&shown, ptmx); close(read) }() // ends with EIO once the terminal side is closed
	var out bytes.Buffer
	err = runProgram(context.Background(), args, func(k string) string { return env[k] }, &out, tty)
	tty.Close()
	<-read
	return shown.String(), out.String(), err
}

// onPipe runs the program with stderr on a pipe: a file, but no terminal.
func onPipe(t *testing.T, env map[string]string, args ...string) (stderr, stdout string, err error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got bytes.Buffer
	read := make(chan struct{})
	go func() { _, _ = io.Copy(&got, r); close(read) }()
	var out bytes.Buffer
	err = runProgram(context.Background(), args, func(k string) string { return env[k] }, &out, w)
	w.Close()
	<-read
	return got.String(), out.String(), err
}

// framesMatch checks that the screen shows progress frames drawn in place, each matching frame, and ends erased.
func framesMatch(t *testing.T, what, screen string, frame *regexp.Regexp) []string {
	t.Helper()
	frames := strings.Split(screen, "\r")[1:]
	if len(frames) < 2 || frames[len(frames)-1] != "\x1b[K" {
		t.Fatalf("%s on a terminal showed %q, want progress frames drawn with \\r and the line erased at the end", what, screen)
	}
	for _, f := range frames[:len(frames)-1] {
		if !frame.MatchString(f) {
			t.Errorf("%s: progress frame %q does not match %s", what, f, frame)
		}
	}
	return frames
}

// dispatch-test draws its progress line on a terminal and nothing of it on a pipe; the report is on stdout.
func TestCLIDispatchProgressOnTerminal(t *testing.T) {
	args := []string{"dispatch-test", "--dispatches", "2", "--entities", "1", "--work", "600ms", "--ttl", "2s"}
	screen, stdout, err := onTerminal(t, nil, args...)
	if err != nil {
		t.Fatalf("hub %v = %v\n%s", args, err, stdout)
	}
	framesMatch(t, "dispatch-test", screen,
		regexp.MustCompile(`^dispatch-test 0:0\d / ~0:01  completed [0-2]/2  running [01]  violations 0\x1b\[K$`))
	if !strings.Contains(stdout, "OK: one holder per entity at a time") || strings.ContainsAny(stdout, "\r\x1b") {
		t.Errorf("hub %v: stdout\n%q\nwant the report alone", args, stdout)
	}
	stderr, _, err := onPipe(t, nil, args...)
	if err != nil || stderr != "" {
		t.Errorf("hub %v on a pipe = %v, stderr %q; want nil and nothing", args, err, stderr)
	}
}

// hub-bench against a running hub draws connections, events published and delivered, and violations; --json
// draws nothing even on a terminal.
func TestCLIBenchProgressOnTerminal(t *testing.T) {
	rs := rig.StartRedis(t)
	h := hubtest.Start(t, rs)
	args := []string{"hub-bench", "--url", h.URL, "--redis-url", rs.URL(), "--prefix", h.Prefix, "--scenario", "fanout",
		"--conns", "3", "--events", "40", "--rate", "40", "--drain", "10s"}
	screen, stdout, err := onTerminal(t, nil, args...)
	if err != nil {
		t.Fatalf("hub %v = %v\nstdout: %s\nscreen: %q", args, err, stdout, screen)
	}
	frames := framesMatch(t, "bench", screen,
		regexp.MustCompile(`^fanout 0:0\d / ~0:01  conns [0-3]/3  published \d+/40  delivered \d+  violations 0\x1b\[K$`))
	if !strings.Contains(strings.Join(frames, ""), "conns 3/3") {
		t.Errorf("bench: no frame with every connection open: %q", frames)
	}
	if strings.ContainsAny(stdout, "\r\x1b") || !strings.Contains(stdout, "fanout") {
		t.Errorf("hub %v: stdout\n%q\nwant the report alone", args, stdout)
	}
	args = append(args, "--json")
	if screen, _, err := onTerminal(t, nil, args...); err != nil || strings.Contains(screen, "\r") {
		t.Errorf("hub %v on a terminal = %v, showed %q; want nil and no progress", args, err, screen)
	}
}

// Secrets from files, end to end: a token signed with the secret in HUB_AUTH_HMAC_SECRET_FILE verifies with the
// file's content, and a hub given only HUB_REDIS_URL_FILE stores what it is sent in that Redis.
func TestCLISecretFiles(t *testing.T) {
	const secret = "secret-from-a-mounted-file-0123456789"
	env := map[string]string{"HUB_AUTH_HMAC_SECRET_FILE": writeFile(t, "hmac", secret+"\n")}
	code, stdout, stderr := hubtest.CLI(t, env, "token", "--subscribe", "project.*")
	if code != 0 {
		t.Fatalf("hub token with HUB_AUTH_HMAC_SECRET_FILE: exit %d, %s", code, stderr)
	}
	tok, err := jwt.Parse(strings.TrimSpace(stdout), func(*jwt.Token) (any, error) { return []byte(secret), nil },
		jwt.WithValidMethods([]string{"HS256"}))
	if err != nil || !tok.Valid {
		t.Errorf("the token does not verify with the file's secret: %v", err)
	}

	rs := rig.StartRedis(t)
	const prefix = "secretfile"
	h := hubtest.RunDeployed(t, map[string]string{"HUB_REDIS_URL_FILE": writeFile(t, "redis-url", rs.URL()+"\n"), "HUB_REDIS_PREFIX": prefix})
	resp, err := h.Client().Post(h.URL+"/publish", "application/json", strings.NewReader(`{"topic":"t1","data":{"a":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /publish = %s, want 202", resp.Status)
	}
	key := pubsub.Keys{Prefix: prefix}.Stream("t1")
	if n, err := rs.Client().XLen(context.Background(), key).Result(); err != nil || n != 1 {
		t.Errorf("XLEN %s in the Redis of HUB_REDIS_URL_FILE = %d, %v; want 1", key, n, err)
	}
}
