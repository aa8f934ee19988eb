package docs_test

import (
	"bytes"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/rig"
)

// The shortest publish call docs/publishing.md shows, two keys and three arguments, run by sh with redis-cli against a
// real Redis, publishes an event the hub delivers.
func TestScriptShortestCall(t *testing.T) {
	hubtest.NeedTool(t, "redis-cli", "sh")
	block := markedBlocks(t, "docs/publishing.md", "TestScriptShortestCall")[0]
	rs := rig.StartRedisWith(t, rig.RedisOptions{})
	h := hubtest.Start(t, rs)
	host, port, _ := strings.Cut(rs.Addr, ":")
	script := strings.ReplaceAll(strings.ReplaceAll(block, "'hub:{", "'"+h.Prefix+":{"), "redis-cli ", "redis-cli -h "+host+" -p "+port+" ")
	out, err := exec.Command("sh", "-c", script).CombinedOutput()
	id := strings.TrimSpace(string(out))
	if err != nil || !regexp.MustCompile(`^\d+-\d+$`).MatchString(id) {
		t.Fatalf("the shortest call = %v, output %q; want an event id\n%s", err, out, script)
	}
	var page bytes.Buffer
	if _, err := hubtest.RunCmd(t, &page, nil, "history", "--topic", "project.42", "--url", h.URL); err != nil || !strings.Contains(page.String(), id) ||
		!strings.Contains(page.String(), `"progress":0.4`) {
		t.Errorf("hub history after the shortest call = %v, printed %s; want event %s", err, page.String(), id)
	}
}
