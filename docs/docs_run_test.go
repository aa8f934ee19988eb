//go:build unix

package docs_test

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/rig"
)

// shell runs script with sh in dir, with bin first on PATH and env added, in a process group of its own that is
// killed when the script ends or within passes (a doc's example may start a hub in the background). It returns
// the combined output and the script's error.
func shell(t *testing.T, dir, bin, script string, within time.Duration, env ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if bin != "" {
		cmd.Env = append(cmd.Env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second // what it left in the background holds the output open; the kill below ends it
	var out rig.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Start()
	if err == nil {
		err = cmd.Wait()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what the script left running in the background
	}
	return out.String(), err
}

// The shell and HTTP examples of docs/publishing.md, run as written by sh against a hub and a real Redis: only where
// they point changes (the hub's address, the Redis URL, the test's key prefix through HUB_REDIS_PREFIX).
func TestDocsPublishExamples(t *testing.T) {
	hubtest.NeedTool(t, "sh", "curl")
	rs := rig.StartRedis(t)
	h := hubtest.Start(t, rs)
	bin := hubtest.BuildHub(t)
	blocks := markedBlocks(t, "docs/publishing.md", "TestDocsPublishExamples")
	if len(blocks) != 2 {
		t.Fatalf("docs/publishing.md: %d blocks run by this test, want the shell and the HTTP examples", len(blocks))
	}
	env := []string{"HUB_REDIS_URL=" + rs.URL(), "HUB_REDIS_PREFIX=" + h.Prefix}
	cli := strings.ReplaceAll(blocks[0], "redis://127.0.0.1:6379/0", rs.URL())
	if out, err := shell(t, ".", bin, cli, 30*time.Second, env...); err != nil {
		t.Fatalf("the shell example: %v\n%s\n%s", err, cli, out)
	}
	if n := xlen(t, h, "project.42"); n != 3 {
		t.Errorf("after the shell example's three hub publish commands, project.42 holds %d events, want 3", n)
	}
	httpEx := strings.ReplaceAll(blocks[1], "http://127.0.0.1:8080", h.URL)
	first, err := shell(t, ".", bin, httpEx, 30*time.Second)
	again, err2 := shell(t, ".", bin, httpEx, 30*time.Second)
	id := regexp.MustCompile(`\{"id":"(\d+-\d+)"\}`).FindStringSubmatch(first)
	if err != nil || err2 != nil || id == nil || !strings.Contains(again, `{"id":"`+id[1]+`","duplicate":true}`) {
		t.Errorf("the HTTP example twice printed %q (%v), then %q (%v); want an id, then the same id as a duplicate", first, err, again, err2)
	}
	if n := xlen(t, h, "project.42"); n != 4 {
		t.Errorf("after the HTTP example twice, project.42 holds %d events, want 4", n)
	}
}

// The worked example of docs/security.md, run by sh as written: a hub with an HMAC secret, a console token that
// streams, an agent token that publishes, a session cookie. Where it points changes (the port, the Redis URL), the
// stream is cut after 3 s (curl --max-time), and the script waits for the hub it started to answer before going on.
func TestDocsSecurityExample(t *testing.T) {
	hubtest.NeedTool(t, "sh", "curl", "openssl")
	rs := rig.StartRedis(t)
	bin := hubtest.BuildHub(t)
	port := strings.TrimPrefix(rig.FreeAddr(t), "127.0.0.1:")
	script := markedBlocks(t, "docs/security.md", "TestDocsSecurityExample")[0]
	for from, to := range map[string]string{
		":8080":                    ":" + port,
		"redis://127.0.0.1:6379/0": rs.URL(),
		"curl -N":                  "curl -sN --max-time 3",
		"&\n":                      "&\nuntil curl -s http://localhost:" + port + "/healthz >/dev/null; do sleep 0.1; done\n",
	} {
		if !strings.Contains(script, from) {
			t.Fatalf("docs/security.md's example no longer has %q; update this test with it", from)
		}
		script = strings.ReplaceAll(script, from, to)
	}
	out, _ := shell(t, ".", bin, script, time.Minute, "HUB_REDIS_PREFIX="+rig.Prefix(t), "HUB_LOG_LEVEL=warn")
	for what, want := range map[string]*regexp.Regexp{
		"the console token's stream":   regexp.MustCompile(`(?m)^retry: \d+$`),
		"the agent token's publish":    regexp.MustCompile(`\{"id":"\d+-\d+"\}`),
		"the session cookie, HttpOnly": regexp.MustCompile(`(?i)set-cookie: [^=]+=[^;]+;.*HttpOnly`),
		"the session's grant in JSON":  regexp.MustCompile(`"subject":"console-ops"`),
	} {
		if !want.MatchString(out) {
			t.Errorf("docs/security.md's example: no %s (%s) in its output:\n%s", what, want, out)
		}
	}
}

// xlen is the length of topic's stream, failing the test when Redis does not answer.
func xlen(t *testing.T, h *hubtest.Hub, topic string) int64 {
	t.Helper()
	n, err := h.RDB.XLen(t.Context(), h.StreamKey(topic)).Result()
	if err != nil {
		t.Fatalf("XLEN %s: %v", h.StreamKey(topic), err)
	}
	return n
}
