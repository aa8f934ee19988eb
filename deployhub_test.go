package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// deployedHub is the real program run through run() with nothing but the environment a deployment would give it:
// a cluster or sentinel URL, TLS files, h2c. The harness of the other tests wires a single test Redis instead.
type deployedHub struct {
	t      testing.TB
	URL    string // http://… or https://…
	logs   *syncBuffer
	cancel context.CancelFunc
	done   chan error
}

func runDeployed(t testing.TB, env map[string]string) *deployedHub {
	t.Helper()
	env = envWithDefaults(env, map[string]string{"HUB_LOG_LEVEL": "info", "HUB_SHUTDOWN_TIMEOUT": "5s"})
	ctx, cancel := context.WithCancel(context.Background())
	h := &deployedHub{t: t, logs: &syncBuffer{}, cancel: cancel, done: make(chan error, 1)}
	out := &syncBuffer{}
	getenv := func(k string) string { return env[k] }
	go func() {
		h.done <- run(ctx, []string{"serve", "--listen", "127.0.0.1:0"}, getenv, strings.NewReader(""), out, h.logs)
	}()
	t.Cleanup(h.stop)
	deadline := time.Now().Add(15 * time.Second)
	for h.URL == "" {
		if line, ok := strings.CutPrefix(out.String(), "hub listening on "); ok {
			h.URL = strings.TrimSpace(line)
			break
		}
		select {
		case err := <-h.done:
			h.cancel = nil
			t.Fatalf("run() returned before listening: %v\nlogs:\n%s", err, h.logs)
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("hub did not listen within 15s; logs:\n%s", h.logs)
		}
	}
	h.waitReady(15 * time.Second)
	return h
}

// client is an HTTP client for the hub; it trusts any certificate, since the tests' are self-signed.
func (h *deployedHub) client() *http.Client {
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
}

func (h *deployedHub) waitReady(within time.Duration) {
	h.t.Helper()
	c := h.client()
	defer c.CloseIdleConnections()
	deadline := time.Now().Add(within)
	for {
		resp, err := c.Get(h.URL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("hub at %s not ready within %v (last: %v); logs:\n%s", h.URL, within, err, h.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (h *deployedHub) stop() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	h.cancel = nil
	select {
	case err := <-h.done:
		if err != nil {
			h.t.Errorf("run() = %v", err)
		}
	case <-time.After(30 * time.Second):
		h.t.Errorf("run() did not return within 30s of cancel")
	}
}

func envWithDefaults(a, defaults map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(defaults))
	for k, v := range defaults {
		out[k] = v
	}
	for k, v := range a {
		out[k] = v
	}
	return out
}

// needTool skips the test when a program is missing, and fails it when CI is set: CI installs it.
func needTool(t testing.TB, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s not installed; CI must provide it (.ci/run)", n)
			}
			t.Skipf("%s not installed; skipping", n)
		}
	}
}

// freePort returns a loopback port that was free a moment ago, below 55535 so that port+10000 (a cluster node's
// bus port) exists too, and with that one free as well.
func freeBusPort(t testing.TB) int {
	t.Helper()
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("find a free port: %v", err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if p+10000 > 65535 {
			continue
		}
		if bus, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+10000)); err == nil {
			bus.Close()
			return p
		}
	}
	t.Fatalf("no free port pair found")
	return 0
}

// startProc runs a program until the test ends; its output goes to a log file in dir, shown when the test fails.
func startProc(t testing.TB, dir, name string, args ...string) *exec.Cmd {
	t.Helper()
	logPath := filepath.Join(dir, filepath.Base(name)+".out")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	waited := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(waited) }()
	t.Cleanup(func() {
		// SIGTERM first: nginx's master then stops its workers, which a SIGKILL would leave running.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-waited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-waited
		}
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("%s %s output:\n%s", name, strings.Join(args, " "), lastLines(string(b), 30))
		}
	})
	return cmd
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// waitFor polls cond until it holds or within passes.
func waitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func loopback(port int) string { return fmt.Sprintf("127.0.0.1:%d", port) }
