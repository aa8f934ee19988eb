package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/rig"
)

// hub publish holds data to docs/schemas as POST /publish does: strict refuses a typo with exit 1 naming the
// field and stores nothing; warn says so on stderr and publishes; off says nothing. A type without a schema and
// good data pass every mode.
func TestCLIPublishValidation(t *testing.T) {
	rs := rig.StartRedis(t)
	prefix := rig.Prefix(t)
	stream := prefix + ":{t}:events"
	xlen := func() int64 {
		t.Helper()
		n, err := rs.Client().XLen(context.Background(), stream).Result()
		if err != nil {
			t.Fatalf("XLEN %s: %v", stream, err)
		}
		return n
	}
	publish := func(mode, typ, data string) (int, string, string) {
		env := map[string]string{"HUB_REDIS_URL": rs.URL(), "HUB_REDIS_PREFIX": prefix, "HUB_EVENTS_VALIDATION": mode}
		return hubtest.CLI(t, env, "publish", "--topic", "t", "--type", typ, "--data", data)
	}
	const typo = `{"workflow":"wf-1","progress":40}`
	code, stdout, stderr := publish("strict", "progress", typo)
	if want := "hub: progress data does not match docs/schemas/progress.json: progress: 40 is not between 0 and 1\n"; code != 1 || stdout != "" || stderr != want {
		t.Errorf("strict: hub publish %s: exit %d, stdout %q, stderr %q; want 1, nothing, %q", typo, code, stdout, stderr, want)
	}
	code, _, stderr = publish("strict", "lock", `{"key":"db","holder":"a","fence":1,"state":"taken","ttl_ms":5}`)
	if code != 1 || !strings.Contains(stderr, `state: "taken" is not one of acquired, renewed, released, lost, expired`) {
		t.Errorf("strict: hub publish of a lock in state taken: exit %d, stderr %q; want 1 naming state", code, stderr)
	}
	if n := xlen(); n != 0 {
		t.Fatalf("strict: after two refused publishes XLEN = %d, want 0", n)
	}
	for _, c := range []struct{ mode, typ, data, stderr string }{
		{"warn", "progress", typo, "hub publish: warning: progress data does not match docs/schemas/progress.json: progress: 40 is not between 0 and 1 (events.validation: warn, published all the same)\n"},
		{"off", "progress", typo, ""},
		{"strict", "build-log", typo, ""},
		{"strict", "progress", `{"workflow":"wf-1","progress":0.4,"status":"running"}`, ""},
	} {
		code, stdout, stderr := publish(c.mode, c.typ, c.data)
		if code != 0 || !strings.HasSuffix(stdout, "\n") || stderr != c.stderr {
			t.Errorf("%s: hub publish --type %s %s: exit %d, stdout %q, stderr %q; want 0, an id, %q", c.mode, c.typ, c.data, code, stdout, stderr, c.stderr)
		}
	}
	if n := xlen(); n != 4 {
		t.Errorf("after four accepted publishes XLEN = %d, want 4", n)
	}
}

// serve does not start with an events.validation that is no mode, and says which there are.
func TestCLIServeRefusesAnUnknownValidationMode(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		args []string
	}{
		{map[string]string{"HUB_EVENTS_VALIDATION": "maybe"}, []string{"serve"}},
		{nil, []string{"serve", "--config", writeFile(t, "config.yaml", "events:\n  validation: maybe\n")}},
	} {
		code, stdout, stderr := hubtest.CLI(t, c.env, c.args...)
		if want := "hub: events.validation: \"maybe\" is not off, warn or strict\n"; code != 1 || stdout != "" || stderr != want {
			t.Errorf("hub %v with %v: exit %d, stdout %q, stderr %q; want 1, nothing, %q", c.args, c.env, code, stdout, stderr, want)
		}
	}
}
