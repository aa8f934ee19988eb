package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

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

func loopback(port int) string { return fmt.Sprintf("127.0.0.1:%d", port) }
