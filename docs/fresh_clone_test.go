//go:build slow && unix

package docs_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/config"
	"github.com/syncverse/hub/internal/rig"
)

// A newcomer's first minutes, from a fresh clone in a temporary directory, following the README's first screen
// literally on a machine whose default ports are taken: build the binary, start the demo, publish three ways (the
// CLI, HTTP, redis-cli with the script file), and watch with curl and hub watch. Only where the commands point
// changes: the demo moves to free ports, so the loop is pointed at the ones it logged.
func TestFreshCloneFollowsTheREADME(t *testing.T) {
	hubtest.NeedTool(t, "git", "sh", "curl", "redis-cli")
	for _, addr := range []string{config.Default().Listen, config.Default().Redis.EmbeddedAddr} {
		if ln, err := net.Listen("tcp", addr); err == nil {
			t.Cleanup(func() { ln.Close() })
		}
	}
	clone := filepath.Join(t.TempDir(), "hub")
	root, _ := os.Getwd()
	if out, err := exec.Command("git", "clone", "--quiet", root, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	blocks := markedBlocks(t, "README.md", "TestFreshCloneFollowsTheREADME")
	if len(blocks) != 2 {
		t.Fatalf("README.md: %d blocks run by this test, want the build and the 60-second loop", len(blocks))
	}
	build := commandsOf(blocks[0])
	if len(build) != 3 || build[0] != "go build -o bin/hub ." || !strings.HasPrefix(build[1], "export PATH=") ||
		!strings.HasPrefix(build[2], "hub --demo") {
		t.Fatalf("the README's build block is %q; this test follows go build -o bin/hub ., export PATH=..., hub --demo", build)
	}
	if out, err := shell(t, clone, "", build[0], 5*time.Minute); err != nil {
		t.Fatalf("%s in a fresh clone: %v\n%s", build[0], err, out)
	}
	export := build[1] + "; " // the README's shell keeps it for every command after it
	base, redisURL := startFreshDemo(t, clone, export+"exec "+build[2])
	host := strings.TrimPrefix(base, "http://")
	redisPort := redisURL[strings.LastIndex(redisURL, ":")+1 : strings.LastIndex(redisURL, "/")]
	point := func(cmd string) string {
		cmd = strings.ReplaceAll(cmd, "127.0.0.1:8080", host)
		cmd = strings.ReplaceAll(cmd, "hub watch ", "hub watch --url "+base+" ") // its default is 127.0.0.1:8080
		return strings.ReplaceAll(cmd, "-p 6380", "-p "+redisPort)
	}
	var watchers []*rig.SyncBuffer
	var publishes []string
	for _, cmd := range commandsOf(blocks[1]) {
		if strings.Contains(cmd, "curl -N") || strings.Contains(cmd, "hub watch") {
			watchers = append(watchers, startShell(t, clone, export+"exec "+point(cmd)))
		} else {
			publishes = append(publishes, export+point(cmd))
		}
	}
	if len(watchers) != 2 || len(publishes) != 3 {
		t.Fatalf("the README's loop: %d watch and %d publish commands, want 2 and 3 (the CLI, HTTP, redis-cli)", len(watchers), len(publishes))
	}
	t.Cleanup(func() {
		if t.Failed() {
			for i, w := range watchers {
				t.Logf("watcher %d's output:\n%s", i, w)
			}
		}
	})
	rig.Eventually(t, 10*time.Second, "the loop's curl -N and hub watch connected", func() bool {
		v, _ := rig.MetricValue(rig.Scrape(t, base), "hub_sse_connections_active")
		return v >= 2
	})
	for _, cmd := range publishes {
		if out, err := shell(t, clone, "", cmd, 30*time.Second, "HUB_REDIS_URL="+redisURL); err != nil {
			t.Fatalf("the README's %q: %v\n%s", cmd, err, out)
		}
	}
	steps := []string{`"step":"compile"`, `"step":"test"`, `"step":"deploy"`}
	rig.Eventually(t, 10*time.Second, "curl -N shows the three events", func() bool {
		return containsAll(watchers[0].String(), steps...)
	})
	rig.Eventually(t, 10*time.Second, "hub watch prints the workflow's steps", func() bool {
		return containsAll(watchers[1].String(), "wf-7", "compile", "test", "deploy")
	})
}

// commandsOf splits a shell block into its commands: continuation lines joined, comments and blank lines left out.
func commandsOf(block string) []string {
	var out []string
	cur := ""
	for _, line := range strings.Split(block, "\n") {
		if t := strings.TrimSpace(line); cur == "" && (t == "" || strings.HasPrefix(t, "#")) {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cur += strings.TrimSuffix(line, "\\")
			continue
		}
		cur += line
		if i := strings.Index(cur, "  #"); i > 0 && !strings.Contains(cur[:i], "'") {
			cur = cur[:i]
		}
		out = append(out, strings.TrimSpace(cur))
		cur = ""
	}
	return out
}

// startFreshDemo runs the README's demo command in dir until the test ends; it returns the hub's URL and the
// embedded Redis's URL, as the hub's output names them.
func startFreshDemo(t *testing.T, dir, command string) (base, redisURL string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = dir
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	urls, logs := make(chan string, 1), &rig.SyncBuffer{}
	go func() {
		for sc := bufio.NewScanner(stdout); sc.Scan(); {
			var l struct{ Message, URL string }
			if json.Unmarshal(sc.Bytes(), &l) == nil && l.Message == "hub listening" {
				urls <- l.URL
			}
		}
	}()
	go func() { _, _ = io.Copy(logs, stderr) }()
	select {
	case base = <-urls:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not listen within 20s; logs:\n%s", command, logs)
	}
	rig.Eventually(t, 5*time.Second, "the demo names where its embedded Redis moved", func() bool {
		for _, line := range strings.Split(logs.String(), "\n") {
			var l struct {
				RedisURL string `json:"redis_url"`
			}
			if json.Unmarshal([]byte(line), &l) == nil && l.RedisURL != "" {
				redisURL = l.RedisURL
				return true
			}
		}
		return false
	})
	return base, redisURL
}

// startShell runs a command that does not end by itself (a stream) in dir until the test ends, and returns its
// output as it comes.
func startShell(t *testing.T, dir, command string) *rig.SyncBuffer {
	t.Helper()
	out := &rig.SyncBuffer{}
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return out
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
