package pubsub

import (
	"context"
	"regexp"
	"slices"
	"testing"

	"github.com/syncverse/hub/internal/redistest"
)

// The description `hub script` prints names every position publish.lua reads, and no other.
func TestPublishScriptArgsDescribeTheScript(t *testing.T) {
	read := regexp.MustCompile(`(KEYS|ARGV)\[(\d+)\]`).FindAllString(PublishScript, -1)
	slices.Sort(read)
	read = slices.Compact(read)
	var described []string
	for _, a := range PublishScriptArgs {
		described = append(described, a.Name)
	}
	slices.Sort(described)
	if !slices.Equal(read, described) {
		t.Errorf("publish.lua reads %v, PublishScriptArgs describes %v", read, described)
	}
}

// LoadScript loads the script into a real Redis: EVALSHA then runs it by the SHA it returns.
func TestLoadScriptThenEVALSHA(t *testing.T) {
	rs := redistest.StartReal(t, redistest.Options{})
	rdb := rs.Client()
	ctx := context.Background()
	sha, err := LoadScript(ctx, rdb, PublishScript)
	if err != nil || sha != ScriptSHA(PublishScript) {
		t.Fatalf("LoadScript = %q, %v; want %s", sha, err, ScriptSHA(PublishScript))
	}
	id, err := rdb.EvalSha(ctx, sha, []string{"hub:{s}:events", "hub:{s}:state"}, "hub:{s}:live", "progress", `{"workflow":"w"}`,
		10000, 65536, "").Text()
	if err != nil || id == "" {
		t.Errorf("EVALSHA %s = %q, %v", sha, id, err)
	}
}
