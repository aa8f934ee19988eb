package pubsub

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/syncverse/hub/internal/rig"
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
	rs := rig.StartRedisWith(t, rig.RedisOptions{})
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

// The defaults publish.lua gives a call that leaves ARGV[4] and ARGV[5] out are the hub's.
func TestPublishScriptDefaultsAreTheHubs(t *testing.T) {
	for _, want := range []string{fmt.Sprintf("maxLen = '%d'", DefaultMaxLen), fmt.Sprintf("maxBytes = '%d'", DefaultMaxEventBytes)} {
		if !strings.Contains(PublishScript, want) {
			t.Errorf("publish.lua does not default with %q", want)
		}
	}
}

// The shortest call, two keys and three arguments, stores and publishes the event against a real Redis; the
// default max event bytes still refuses a larger one.
func TestPublishScriptShortestCall(t *testing.T) {
	rs := rig.StartRedisWith(t, rig.RedisOptions{})
	rdb := rs.Client()
	ctx := context.Background()
	keys := []string{"hub:{s}:events", "hub:{s}:state"}
	id, err := rdb.Eval(ctx, PublishScript, keys, "hub:{s}:live", "progress", `{"workflow":"w"}`).Text()
	if err != nil || id == "" {
		t.Fatalf("EVAL with 2 keys and 3 arguments = %q, %v; want the event's id", id, err)
	}
	if n, _ := rdb.XLen(ctx, keys[0]).Result(); n != 1 {
		t.Errorf("the stream holds %d entries, want 1", n)
	}
	big := `"` + strings.Repeat("x", DefaultMaxEventBytes) + `"`
	if err := rdb.Eval(ctx, PublishScript, keys, "hub:{s}:live", "progress", big).Err(); err == nil || err.Error() != "ERR event too large" {
		t.Errorf("EVAL of %d bytes without ARGV[5] = %v, want ERR event too large", len(big), err)
	}
}
