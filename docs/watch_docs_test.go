package docs_test

import (
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/rig"
)

// The first example of docs/watching.md, run as written in-process, against a hub on a test port: only --url is
// added to the commands that talk to it, and the watch is stopped once it has printed the published event.
func TestWatchingDocsExamples(t *testing.T) {
	rs := rig.StartRedis(t)
	h := hubtest.Start(t, rs)
	env := []string{"HUB_REDIS_URL=" + rs.URL(), "HUB_REDIS_PREFIX=" + h.Prefix}
	block := markedBlocks(t, "docs/watching.md", "TestWatchingDocsExamples")[0]
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		args, err := hubtest.PlainWords(line)
		if err != nil {
			t.Fatal(err)
		}
		if args[0] != "hub" {
			t.Fatalf("docs/watching.md: %q does not run hub", line)
		}
		args = args[1:]
		if args[0] != "publish" {
			args = append(args, "--url", h.URL)
		}
		var out rig.SyncBuffer
		if args[0] != "watch" {
			if stderr, err := hubtest.RunCmd(t, &out, env, args...); err != nil || !strings.Contains(out.String(), "demo") && args[0] != "publish" {
				t.Errorf("docs/watching.md: %s = %v, printed %q (stderr %s)", line, err, out.String(), stderr)
			}
			continue
		}
		w := hubtest.StartCmd(t, &out, env, args...)
		rig.Eventually(t, 10*time.Second, line+" printing the published event", func() bool {
			return strings.Contains(out.String(), "demo progress wf-1 compile · 40% · running")
		})
		if err := w.Stop(t); err != nil {
			t.Errorf("docs/watching.md: %s = %v after Ctrl-C, want nil", line, err)
		}
	}
}
