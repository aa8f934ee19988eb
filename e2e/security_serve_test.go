package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/auth"
	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/config"
	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/internal/tokentest"
)

// A stream ends when its token expires, within a second of exp, with a final auth-expired event; its subscription
// goes with it.
func TestStreamEndsWhenTokenExpires(t *testing.T) {
	rs := rig.StartRedis(t)
	h, admin := secureHub(t, rs, "HUB_SSE_HEARTBEAT=200ms")
	tok := signToken(t, auth.Grant{Subscribe: []string{"expiring"}}, 2*time.Second)
	exp := hubtest.TokenExpiry(t, tok)
	c := rig.OpenStreamWith(t, h.URL, rig.TopicQuery("expiring"), bearer(tok))
	if c.Status != http.StatusOK {
		t.Fatalf("GET /events = %d %s", c.Status, c.Body)
	}
	var last rig.Frame
	for _, f := range c.UntilEnd(time.Until(exp) + 3*time.Second) {
		if f.Event != "" {
			last = f
		}
	}
	ended := time.Now()
	if last.Event != "auth-expired" || !strings.Contains(last.Data, "expired") {
		t.Errorf("last event = %+v, want event auth-expired", last)
	}
	if d := ended.Sub(exp); d < -50*time.Millisecond || d > time.Second {
		t.Errorf("stream ended %v after exp, want within a second", d)
	}
	rig.WaitZero(t, h.URL, admin, "hub_subscriptions", "hub_sse_connections_active")
	if v, _ := rig.MetricValue(rig.ScrapeWith(t, h.URL, admin), "hub_sse_connections_closed_total", "reason=token_expired"); v != 1 {
		t.Errorf("hub_sse_connections_closed_total{reason=token_expired} = %v, want 1", v)
	}
	if status, msg := get(t, h.URL, "/events?topic=expiring", bearer(tok)); status != http.StatusUnauthorized {
		t.Errorf("reconnect with the expired token = %d %q, want 401", status, msg)
	}
}

// serve refuses a public listen address when no auth is configured, says why, and starts nothing.
func TestServeRefusesPublicListenWithoutAuth(t *testing.T) {
	rs := rig.StartRedis(t)
	for _, listen := range []string{"0.0.0.0:0", ":0", "[::]:0", "hub.example.com:8080"} {
		var out, errb bytes.Buffer
		env := map[string]string{"HUB_REDIS_URL": rs.URL()}
		err := hubtest.Run(context.Background(), []string{"serve", "--listen", listen}, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errb, nil)
		if err == nil || !strings.Contains(err.Error(), "not a loopback address and no auth is configured") || !strings.Contains(err.Error(), "auth.hmac_secret") {
			t.Errorf("serve --listen %s without auth = %v, want a refusal naming the auth settings", listen, err)
		}
		if out.Len() != 0 {
			t.Errorf("serve --listen %s printed %q before refusing", listen, out.String())
		}
	}
	for listen, want := range map[string]bool{"127.0.0.1:8080": true, "localhost:8080": true, "[::1]:8080": true, "127.1.2.3:80": true,
		"0.0.0.0:8080": false, ":8080": false, "10.0.0.1:8080": false, "example.com:80": false, "garbage": false} {
		if got := config.IsLoopback(listen); got != want {
			t.Errorf("config.IsLoopback(%q) = %v, want %v", listen, got, want)
		}
	}
	var errb bytes.Buffer
	env := map[string]string{"HUB_REDIS_URL": rs.URL(), "HUB_AUTH_ANONYMOUS": "false"}
	err := hubtest.Run(context.Background(), []string{"serve"}, func(k string) string { return env[k] }, strings.NewReader(""), &bytes.Buffer{}, &errb, nil)
	if err == nil || !strings.Contains(err.Error(), "no client could connect") {
		t.Errorf("serve with auth.anonymous false and no key = %v, want a refusal", err)
	}
	anon := true
	for name, a := range map[string]config.AuthConfig{"a secret": {HMACSecret: testSecret}, "a key file": {PublicKeyFile: "k.pem"}, "anonymous on purpose": {Anonymous: &anon}} {
		if err := (&config.Config{Listen: "0.0.0.0:8080", Auth: a}).CheckExposure(); err != nil {
			t.Errorf("CheckExposure(public listen, %s) = %v, want nil", name, err)
		}
	}
}

// With a public listen and a secret, serve starts; anonymous access is off unless asked for.
func TestServePublicListenWithAuth(t *testing.T) {
	rs := rig.StartRedis(t)
	h := hubtest.New(t, map[string]string{
		"HUB_REDIS_URL": rs.URL(), "HUB_REDIS_PREFIX": "pub", "HUB_AUTH_HMAC_SECRET": testSecret, "HUB_SHUTDOWN_TIMEOUT": "5s",
	})
	h.Redis, h.Prefix = rs, "pub"
	h.Start("0.0.0.0:0")
	t.Cleanup(func() { h.Stop() })
	base := "http://" + strings.Replace(h.Addr, "0.0.0.0", "127.0.0.1", 1)
	if status, msg := get(t, base, "/events?topic=a", nil); status != http.StatusUnauthorized {
		t.Errorf("GET /events without a token on a public hub = %d %q, want 401", status, msg)
	}
}

// `hub token` signs what the hub accepts, and refuses what it would refuse.
func TestTokenCommand(t *testing.T) {
	rs := rig.StartRedis(t)
	h, _ := secureHub(t, rs, "HUB_AUTH_ISSUER=ops", "HUB_AUTH_AUDIENCE=hub")
	var out, errb bytes.Buffer
	args := []string{"token", "--subscribe", "project.*,wf-1", "--subscribe", "ops", "--publish", "project.42", "--ttl", "10m", "--subject", "console"}
	if err := hubtest.Run(context.Background(), args, h.Getenv, strings.NewReader(""), &out, &errb, nil); err != nil {
		t.Fatalf("hub token: %v (%s)", err, errb.String())
	}
	tok := strings.TrimSpace(out.String())
	c := rig.OpenStreamWith(t, h.URL, rig.TopicQuery("project.7", "wf-1", "ops"), bearer(tok))
	if c.Status != http.StatusOK {
		t.Fatalf("GET /events with a `hub token` token = %d %s", c.Status, c.Body)
	}
	c.Close()
	if status, msg := get(t, h.URL, "/events?topic=wf-2", bearer(tok)); status != http.StatusForbidden {
		t.Errorf("GET /events?topic=wf-2 = %d %s, want 403", status, msg)
	}
	for name, tc := range map[string]struct {
		args []string
		env  map[string]string
		has  string
	}{
		"no secret":   {[]string{"token", "--subscribe", "a"}, map[string]string{}, "auth.hmac_secret"},
		"bad pattern": {[]string{"token", "--subscribe", "a*b"}, h.Env, "invalid topic pattern"},
		"no grant":    {[]string{"token"}, h.Env, "grant nothing"},
		"zero ttl":    {[]string{"token", "--subscribe", "a", "--ttl", "0s"}, h.Env, "ttl"},
	} {
		err := hubtest.Run(context.Background(), tc.args, func(k string) string { return tc.env[k] }, strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}, nil)
		if err == nil || !strings.Contains(err.Error(), tc.has) {
			t.Errorf("%s: hub %v = %v, want an error with %q", name, tc.args, err, tc.has)
		}
	}
	if err := hubtest.Run(context.Background(), []string{"token", "--bogus"}, h.Getenv, strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}, nil); err != errUsage {
		t.Errorf("hub token --bogus = %v, want errUsage", err)
	}
}

// Neither a query token nor a Redis password reaches the logs.
func TestSecretsNotLogged(t *testing.T) {
	rs := rig.StartRedis(t)
	h, admin := secureHub(t, rs, "HUB_AUTH_ALLOW_QUERY_TOKEN=true", "HUB_LOG_LEVEL=debug")
	c := rig.OpenStreamWith(t, h.URL, url.Values{"topic": {"q"}, "access_token": {admin}}, nil)
	if c.Status != http.StatusOK {
		t.Fatalf("GET /events?access_token= (allowed) = %d %s", c.Status, c.Body)
	}
	c.Close()
	rig.WaitZero(t, h.URL, admin, "hub_sse_connections_active")
	if strings.Contains(h.Logs(), admin) || strings.Contains(h.Logs(), strings.Split(admin, ".")[2]) {
		t.Errorf("the logs hold the query token:\n%s", h.Logs())
	}

	const password = "s3cr3t-redis-pw"
	env := map[string]string{"HUB_REDIS_URL": "redis://:" + password + "@" + rs.Addr + "/0", "HUB_REDIS_PREFIX": "pw", "HUB_SHUTDOWN_TIMEOUT": "2s"}
	ctx, cancel := context.WithCancel(context.Background())
	out, logs := &rig.SyncBuffer{}, &rig.SyncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- hubtest.Run(ctx, []string{"serve", "--listen", "127.0.0.1:0"}, func(k string) string { return env[k] }, strings.NewReader(""), out, logs, nil)
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(1500 * time.Millisecond): // long enough for the start line and the first failed AUTH
		cancel()
		err = <-done
	}
	cancel()
	if !strings.Contains(logs.String(), "hub started") && err == nil {
		t.Fatalf("the hub neither started nor failed; logs:\n%s", logs)
	}
	for what, s := range map[string]string{"logs": logs.String(), "stdout": out.String(), "error": errString(err)} {
		if strings.Contains(s, password) {
			t.Errorf("the Redis password is in the %s:\n%s", what, s)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// At start, hub serve logs where Redis is without any password: the user info and the query's password= and
// sentinel_password= (the root package's own redactor once printed the query as it was).
func TestServeStartLogHidesSentinelPassword(t *testing.T) {
	const secret = "s3nt1nel-Pa55"
	url := "redis+sentinel://:" + secret + "@" + rig.FreeAddr(t) + "/mymaster?sentinel_password=" + secret + "&password=" + secret
	env := map[string]string{"HUB_REDIS_URL": url, "HUB_SHUTDOWN_TIMEOUT": "5s"}
	hub := hubtest.Serve(t, []string{"serve", "--listen", "127.0.0.1:0"}, env) // the start line is logged before run reports the address
	_ = hub.Stop()
	logs := hub.Stderr
	if !strings.Contains(logs.String(), "hub started") {
		t.Fatalf("no start line in the logs:\n%s", logs)
	}
	if strings.Contains(logs.String(), secret) {
		t.Errorf("the logs show the Sentinel password:\n%s", logs)
	}
}

// With metrics.listen set, /metrics moves to its own listener (no auth) and leaves the main one.
func TestMetricsListener(t *testing.T) {
	rs := rig.StartRedis(t)
	addr := rig.FreeAddr(t)
	h, admin := secureHub(t, rs, "HUB_METRICS_LISTEN="+addr)
	if status, msg := get(t, h.URL, "/metrics", bearer(admin)); status != http.StatusNotFound {
		t.Errorf("GET /metrics on the main listener = %d, want 404 when metrics.listen is set (%s)", status, msg)
	}
	if _, ok := rig.MetricValue(rig.Scrape(t, "http://"+addr), "hub_http_rejected_total", "reason=no_token"); !ok {
		t.Errorf("GET http://%s/metrics has no hub_http_rejected_total", addr)
	}
}

const testSecret = tokentest.Secret

// secureHub runs the hub with HS256 auth (anonymous off) and returns it with a token that may read and publish
// everything.
func secureHub(t *testing.T, rs *rig.Redis, env ...string) (*hubtest.Hub, string) {
	t.Helper()
	h := hubtest.Start(t, rs, append([]string{"HUB_AUTH_HMAC_SECRET=" + testSecret}, env...)...)
	return h, signToken(t, auth.Grant{Subscribe: []string{"*"}, Publish: []string{"*"}}, time.Hour)
}

// signToken is the HS256 token of these tests (tokentest owns the secret and the signing).
var signToken = tokentest.Sign

func bearer(tok string) http.Header { return rig.Bearer(tok) }

// get is GET base+path with hdr, for a status and a short answer; the rule tables are internal/server's.
func get(t testing.TB, base, path string, hdr http.Header) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+path, nil)
	if hdr != nil {
		req.Header = hdr
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(b)
}
