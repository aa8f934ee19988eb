package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/internal/redistest"
	"github.com/syncverse/hub/internal/ssetest"
	"github.com/syncverse/hub/pubsub"
)

// The README prints the publish script for agents in other languages: it must be the script the hub runs.
func TestREADMEShowsThePublishScript(t *testing.T) {
	if !strings.Contains(readme(t), "```lua\n"+pubsub.PublishScript+"```") {
		t.Errorf("README.md does not contain pubsub.PublishScript verbatim in a lua block; update it")
	}
}

// The README's redis-cli command, run as written by sh next to a publish.lua, publishes an event that an SSE client
// of the hub receives. Only where it points is changed: a redis-cli on PATH that reaches the test's server, and the
// test's key prefix for the default "hub".
func TestREADMERedisCliExamplePublishes(t *testing.T) {
	needTool(t, "redis-cli", "sh")
	m := regexp.MustCompile("(?s)```sh\n(redis-cli EVAL .*?)```").FindStringSubmatch(readme(t))
	if m == nil {
		t.Fatal("README.md has no sh block starting with redis-cli EVAL")
	}
	rs := redistest.StartReal(t, redistest.Options{})
	h := startHub(t, rs)
	c := ssetest.Open(t, h.URL, ssetest.TopicQuery("project.42"), "0-0")

	dir, bin := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "publish.lua"), []byte(pubsub.PublishScript), 0o644); err != nil {
		t.Fatal(err)
	}
	cli, _ := exec.LookPath("redis-cli")
	host, port, _ := strings.Cut(rs.Addr, ":")
	wrapper := "#!/bin/sh\nexec " + cli + " -h " + host + " -p " + port + ` "$@"` + "\n"
	if err := os.WriteFile(filepath.Join(bin, "redis-cli"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", strings.ReplaceAll(m[1], "'hub:{", "'"+h.Prefix+":{"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	id := strings.TrimSpace(string(out))
	if err != nil || !regexp.MustCompile(`^\d+-\d+$`).MatchString(id) {
		t.Fatalf("the README's redis-cli command = %v, output %q; want an event id\n%s", err, out, m[1])
	}
	want := ssetest.Frame{ID: id, Event: "progress", Data: `{"workflow":"wf-7","progress":0.2}`, HasID: true}
	if got := c.NextEvent(5 * time.Second); got != want {
		t.Errorf("after the README's redis-cli command the live stream sent %+v, want %+v", got, want)
	}
	replay := ssetest.Open(t, h.URL, ssetest.TopicQuery("project.42"), "0-0") // from the stream this time: it was stored too
	if got := replay.NextEvent(5 * time.Second); got != want {
		t.Errorf("a client replaying from 0-0 after the README's redis-cli command got %+v, want %+v", got, want)
	}
}

func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
