package e2e

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/auth"
	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/pubsub"
)

// Every client command finds the hub through HUB_URL and shows it HUB_TOKEN; hub publish with a hub URL publishes
// through POST /publish and prints the hub's warnings; a 401 names the ways of giving a token.
func TestClientsShareHubURLAndToken(t *testing.T) {
	const secret = "clients-test-secret-0123456789abcdef"
	h := hubtest.Start(t, rig.StartRedis(t), "HUB_AUTH_HMAC_SECRET="+secret)
	tok, err := auth.Sign([]byte(secret), auth.Grant{Subscribe: []string{"cli.*"}, Publish: []string{"cli.*"}},
		auth.Claims{Subject: "agent-7", TTL: time.Hour}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"HUB_URL=" + h.URL, "HUB_TOKEN=" + tok, "HUB_*=HUB_URL\nHUB_TOKEN"}

	var out bytes.Buffer
	stderr, err := hubtest.RunCmd(t, &out, env, "publish", "--topic", "cli.one", "--idempotency-key", "k1", "--data", `{"workflow":"w","progress":40}`)
	id := strings.TrimSpace(out.String())
	if err != nil || !strings.Contains(id, "-") {
		t.Fatalf("hub publish with HUB_URL = %v, printed %q (stderr %s), want the event's id", err, out.String(), stderr)
	}
	if want := "hub publish: warning: progress: 40 is not between 0 and 1 (events.validation: warn, published all the same)\n"; stderr != want {
		t.Errorf("hub publish of a bad progress said %q, want %q", stderr, want)
	}
	out.Reset()
	stderr, err = hubtest.RunCmd(t, &out, env, "publish", "--topic", "cli.one", "--idempotency-key", "k1", "--data", `{"workflow":"w","progress":40}`)
	if err != nil || strings.TrimSpace(out.String()) != id || !strings.Contains(stderr, "hub publish: key k1 was published before as "+id+"; nothing stored now") {
		t.Errorf("hub publish again with its key = %v, printed %q, said %q; want the first id and that nothing was stored", err, out.String(), stderr)
	}

	out.Reset()
	stderr, err = hubtest.RunCmd(t, &out, env, "history", "--topic", "cli.one")
	if err != nil || stderr != "" || !strings.Contains(out.String(), id) || strings.Count(out.String(), `"id"`) != 1 {
		t.Errorf("hub history with HUB_URL and HUB_TOKEN = %v (stderr %q), printed %s; want the one event", err, stderr, out.String())
	}

	for _, c := range []struct {
		name string
		env  []string
		want string
	}{
		{"no token", []string{"HUB_URL=" + h.URL},
			"GET /topics: 401 authentication required: send a token as \"Authorization: Bearer <token>\" or in the hub_token cookie; this hub wants a token: give one with --token-file FILE, --token-env NAME or the HUB_TOKEN variable"},
		{"a token of another hub", []string{"HUB_URL=" + h.URL, "HUB_TOKEN=" + tok[:len(tok)-4] + "AAAA"},
			"the token was refused (expired, or not for this hub?): give a valid one with --token-file FILE, --token-env NAME or the HUB_TOKEN variable"},
	} {
		_, err := hubtest.RunCmd(t, &bytes.Buffer{}, c.env, "topics")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("hub topics with %s = %v, want %q", c.name, err, c.want)
		}
	}
	_, err = hubtest.RunCmd(t, &bytes.Buffer{}, []string{"HUB_URL=" + h.URL}, "publish", "--topic", "cli.one", "--data", "{}")
	if err == nil || !strings.Contains(err.Error(), "POST /publish: 401") || !strings.Contains(err.Error(), "HUB_TOKEN") {
		t.Errorf("hub publish through the hub without a token = %v, want the 401 and how to give a token", err)
	}
}

// The client commands warn of a HUB_* variable nobody reads, in one line naming the nearest known one, and go on;
// hub serve and config check know HUB_URL and HUB_TOKEN and do not refuse them.
func TestClientsWarnOfUnknownVariables(t *testing.T) {
	h := hubtest.Start(t, rig.StartRedis(t))
	h.Publish("cli.two", "progress", `{"workflow":"w"}`)
	var out bytes.Buffer
	stderr, err := hubtest.RunCmd(t, &out, []string{"HUB_ULR=x", "HUB_TOKN=y", "HUB_*=HUB_ULR\nHUB_TOKN"}, "topics", "--url", h.URL)
	want := "hub topics: warning: HUB_ULR: unknown variable (did you mean HUB_URL?); HUB_TOKN: unknown variable (did you mean HUB_TOKEN?); ignored\n"
	if err != nil || stderr != want || !strings.Contains(out.String(), "cli.two") {
		t.Errorf("hub topics with HUB_ULR and HUB_TOKN = %v, said %q, printed %q; want %q and the topics", err, stderr, out.String(), want)
	}
	code, stdout, stderr2 := hubtest.CLI(t, map[string]string{"HUB_URL": h.URL, "HUB_TOKEN": "t", "HUB_*": "HUB_URL\nHUB_TOKEN"}, "config", "check")
	if code != 0 || !strings.Contains(stdout, "configuration ok") {
		t.Errorf("hub config check with HUB_URL and HUB_TOKEN set: exit %d, stderr %s; want them known", code, stderr2)
	}
	code, _, stderr2 = hubtest.CLI(t, nil, "publish", "--topic", "t", "--url", h.URL, "--redis-url", "redis://127.0.0.1:1", "--publisher", "p")
	if code != 2 || !strings.HasPrefix(stderr2, "hub publish: --url and --redis-url: give one (--url publishes through the hub, --redis-url through Redis); "+
		"--publisher: through the hub (--url or HUB_URL) the token's subject is the publisher\n") {
		t.Errorf("hub publish --url --redis-url --publisher: exit %d, said %q; want both problems and the help", code, stderr2)
	}
}

// hub publish against a Redis that is not there ends in one line that says so, without go-redis's JSON lines about
// each failed dial (the built binary: main routes go-redis's log).
func TestPublishToADeadRedisSaysOneLine(t *testing.T) {
	bin := hubtest.BuildHub(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(filepath.Join(bin, "hub"), "publish", "--redis-url", "redis://"+addr+"/0", "--topic", "t", "--data", `{"workflow":"w"}`)
	cmd.Env = append(os.Environ(), "HUB_REDIS_PUBLISH_RETRY=2s")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if err == nil || stdout.Len() > 0 || len(lines) != 1 ||
		!strings.HasPrefix(lines[0], "hub: publish through Redis at redis://"+addr+"/0: ") || !strings.Contains(lines[0], "connection refused") {
		t.Errorf("hub publish to a dead Redis = %v, stdout %q, stderr:\n%s\nwant one line naming the Redis and the refusal", err, stdout.String(), stderr.String())
	}
}

// hub script prints the publish script's SHA1 and its arguments; --load puts it into a real Redis, where EVALSHA
// then finds it; a Redis that is not there is one line of error.
func TestCLIScriptPrintsAndLoads(t *testing.T) {
	sha := pubsub.ScriptSHA(pubsub.PublishScript)
	code, stdout, stderr := hubtest.CLI(t, nil, "script")
	if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "sha1 "+sha+" (pubsub/publish.lua)\n") ||
		!strings.Contains(stdout, "  ARGV[6]  the MINID for history.max_age") || !strings.Contains(stdout, "NOSCRIPT") {
		t.Errorf("hub script: exit %d, stderr %q, stdout:\n%s\nwant the SHA1, the layout and the NOSCRIPT fallback", code, stderr, stdout)
	}
	rs := rig.StartRedisWith(t, rig.RedisOptions{})
	code, stdout, stderr = hubtest.CLI(t, nil, "script", "--load", "--redis-url", rs.URL())
	if code != 0 || stdout != sha+"\n" {
		t.Fatalf("hub script --load: exit %d, stdout %q, stderr %q; want the SHA1", code, stdout, stderr)
	}
	if ok, err := rs.Client().ScriptExists(context.Background(), sha).Result(); err != nil || !ok[0] {
		t.Errorf("SCRIPT EXISTS %s after hub script --load = %v, %v", sha, ok, err)
	}
	code, _, stderr = hubtest.CLI(t, nil, "script", "--load")
	if code != 1 || !strings.Contains(stderr, "hub: hub script --load: redis.url (HUB_REDIS_URL, --redis-url) is empty") {
		t.Errorf("hub script --load without a Redis: exit %d, stderr %q", code, stderr)
	}
}
