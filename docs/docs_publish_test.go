package docs_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/pubsub"
)

// docs/publishing.md prints the publish script for agents in other languages: it must be the script the hub runs.
func TestDocsShowThePublishScript(t *testing.T) {
	if !strings.Contains(doc(t, "docs/publishing.md"), "```lua\n"+pubsub.PublishScript+"```") {
		t.Errorf("docs/publishing.md does not contain pubsub.PublishScript verbatim in a lua block; update it")
	}
}

// The redis-cli command of docs/publishing.md, run as written by sh from the repository's root (it reads pubsub/publish.lua, the
// script the hub embeds), publishes an event that an SSE client of the hub receives. Run twice, as a retry would, it
// answers the same id, the second time marked as a duplicate, and the event is delivered and stored once. Only where
// it points is changed: a redis-cli on PATH that reaches the test's server, and the test's key prefix for "hub".
func TestDocsRedisCliExamplePublishes(t *testing.T) {
	hubtest.NeedTool(t, "redis-cli", "sh")
	block := markedBlocks(t, "docs/publishing.md", "TestDocsRedisCliExamplePublishes")[0]
	rs := rig.StartRedisWith(t, rig.RedisOptions{})
	h := hubtest.Start(t, rs)
	c := rig.OpenStream(t, h.URL, rig.TopicQuery("project.42"), "0-0")

	bin := t.TempDir()
	cli, _ := exec.LookPath("redis-cli")
	host, port, _ := strings.Cut(rs.Addr, ":")
	wrapper := "#!/bin/sh\nexec " + cli + " -h " + host + " -p " + port + ` "$@"` + "\n"
	if err := os.WriteFile(filepath.Join(bin, "redis-cli"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func() []string {
		cmd := exec.Command("sh", "-c", strings.ReplaceAll(block, "'hub:{", "'"+h.Prefix+":{"))
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		f := strings.Fields(string(out))
		if err != nil || len(f) != 2 || !regexp.MustCompile(`^\d+-\d+$`).MatchString(f[0]) {
			t.Fatalf("the publishing page's redis-cli command = %v, output %q; want an event id and 0 or 1\n%s", err, out, block)
		}
		return f
	}
	first, again := run(), run()
	if first[1] != "0" || again[0] != first[0] || again[1] != "1" {
		t.Errorf("the publishing page's redis-cli command twice printed %q, then %q; want an id and 0, then the same id and 1", first, again)
	}
	want := rig.Frame{ID: first[0], Event: "progress", Data: `{"workflow":"wf-7","progress":0.2}`, HasID: true}
	if got := c.NextEvent(5 * time.Second); got != want {
		t.Errorf("after the publishing page's redis-cli command the live stream sent %+v, want %+v", got, want)
	}
	replay := rig.OpenStream(t, h.URL, rig.TopicQuery("project.42"), "0-0") // from the stream this time: it was stored too
	if got := replay.NextEvent(5 * time.Second); got != want {
		t.Errorf("a client replaying from 0-0 after the publishing page's redis-cli command got %+v, want %+v", got, want)
	}
	if n, err := h.RDB.XLen(t.Context(), h.StreamKey("project.42")).Result(); err != nil || n != 1 {
		t.Errorf("XLEN after the publishing page's redis-cli command twice = %d, %v; want 1", n, err)
	}
}

// doc is the text of a page of the docs, by its path from the repository's root.
func doc(t *testing.T, path string) string {
	t.Helper()
	return string(hubtest.ReadFile(t, path))
}
