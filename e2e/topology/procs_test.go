//go:build slow

package topology

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

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
