package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/syncverse/hub/auth"
	"github.com/syncverse/hub/internal/rig"
)

// Each authentication and authorization rule, end to end: the request, the status, the JSON error, and that it
// left nothing behind (no event stored, no subscription or stream open).
func TestAuthRules(t *testing.T) {
	rs := rig.StartRedis(t)
	h, admin := secureEdge(t, rs)
	now := time.Now()
	g := auth.Grant{Subscribe: []string{"project.*"}, Publish: []string{"project.42"}}
	good := signToken(t, g, time.Hour)
	readOnly := signToken(t, auth.Grant{Subscribe: []string{"project.*"}}, time.Hour)
	key := []byte(testSecret)
	expired := forge(t, jwt.SigningMethodHS256, key, hubClaims(g, now.Add(-2*time.Hour), now.Add(-2*time.Hour), now.Add(-time.Second)))
	early := forge(t, jwt.SigningMethodHS256, key, hubClaims(g, now, now.Add(time.Hour), now.Add(2*time.Hour)))
	wrongSig := forge(t, jwt.SigningMethodHS256, []byte("some-other-secret-0123456789abcdef!!"), hubClaims(g, now, now, now.Add(time.Hour)))
	none := forge(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, hubClaims(g, now, now, now.Add(time.Hour)))
	hs512 := forge(t, jwt.SigningMethodHS512, key, hubClaims(g, now, now, now.Add(time.Hour)))
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	rs256 := forge(t, jwt.SigningMethodRS256, rsaKey, hubClaims(g, now, now, now.Add(time.Hour)))
	cookie := func(tok string) http.Header { return http.Header{"Cookie": {"hub_token=" + tok}} }

	ev := "/events?topic=project.1"
	pub := func(topic string) string { return eventJSON(topic, "progress") }
	check(t, h.URL, []call{
		{name: "events without a token", path: ev, status: 401, errHas: "authentication required"},
		{name: "events with an expired token", path: ev, header: bearer(expired), status: 401, errHas: "expired"},
		{name: "events with a not-yet-valid token", path: ev, header: bearer(early), status: 401, errHas: "not valid yet"},
		{name: "events with a wrong signature", path: ev, header: bearer(wrongSig), status: 401, errHas: "signature is invalid"},
		{name: "events with alg none", path: ev, header: bearer(none), status: 401, errHas: "signing method none is invalid"},
		{name: "events with alg HS512", path: ev, header: bearer(hs512), status: 401, errHas: "signing method HS512 is invalid"},
		{name: "events with an RS256 token on an HS256 hub", path: ev, header: bearer(rs256), status: 401, errHas: "signing method RS256 is invalid"},
		{name: "events with Basic auth", path: ev, header: http.Header{"Authorization": {"Basic dXNlcjpwdw=="}}, status: 401, errHas: "Bearer"},
		{name: "events with a garbage cookie", path: ev, header: cookie("not-a-jwt"), status: 401, errHas: "malformed token"},
		{name: "events with a query token while disabled", path: ev + "&access_token=" + good, status: 401, errHas: "auth.allow_query_token"},
		{name: "events, one topic outside the claims", path: "/events?topic=secret", header: bearer(good), status: 403, errHas: "subscribing to secret"},
		{name: "events, two of three topics outside", path: "/events?topic=project.1&topic=secret&topic=ops", header: cookie(good), status: 403, errHas: "secret, ops"},
		{name: "publish without a token", method: "POST", path: "/publish", body: pub("project.42"), status: 401, errHas: "authentication required"},
		{name: "publish with an expired token", method: "POST", path: "/publish", header: bearer(expired), body: pub("project.42"), status: 401, errHas: "expired"},
		{name: "publish with alg none", method: "POST", path: "/publish", header: bearer(none), body: pub("project.42"), status: 401, errHas: "none"},
		{name: "publish with a subscribe-only token", method: "POST", path: "/publish", header: bearer(readOnly), body: pub("project.42"), status: 403, errHas: "publishing to project.42"},
		{name: "publish outside the claims", method: "POST", path: "/publish", header: bearer(good), body: pub("project.43"), status: 403, errHas: "publishing to project.43"},
		{name: "topics without a token", path: "/topics", status: 401, errHas: "authentication required"},
		{name: "history outside the claims", path: "/topics/secret/history", header: bearer(good), status: 403, errHas: "secret"},
		{name: "snapshot outside the claims", path: "/topics/secret/snapshot", header: bearer(good), status: 403, errHas: "secret"},
		{name: "history with a bad token", path: "/topics/project.1/history", header: bearer(wrongSig), status: 401, errHas: "signature"},
		{name: "metrics without a token", path: "/metrics", status: 401, errHas: "authentication required"},
		{name: "history inside the claims", path: "/topics/project.1/history", header: bearer(good), status: 200},
		{name: "healthz stays open", path: "/healthz", status: 200},
		{name: "the console stays open", path: "/", status: 200},
	}, quiet(h, admin, "project.42", "project.43", "secret", "ops", "project.1"))

	for _, r := range []string{"no_token", "expired", "bad_token", "query_token", "forbidden"} {
		if v, _ := rig.MetricValue(rig.ScrapeWith(t, h.URL, admin), "hub_http_rejected_total", "reason="+r); v == 0 {
			t.Errorf("hub_http_rejected_total{reason=%q} = 0, want the refusals counted", r)
		}
	}
	if r := do(t, h.URL, call{path: "/topics"}); !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("GET /topics 401: WWW-Authenticate = %q, want Bearer", r.header.Get("WWW-Authenticate"))
	}
}

// The allowed paths work with each way of carrying the token, and /topics shows only the topics a token may read.
func TestAuthAllowedPaths(t *testing.T) {
	rs := rig.StartRedis(t)
	h, admin := secureEdge(t, rs)
	h.publish(t, "project.1", "progress", `{"workflow":"wf-1","seq":1}`)
	h.publish(t, "secret", "progress", `{"workflow":"wf-1","seq":1}`)
	tok := signToken(t, auth.Grant{Subscribe: []string{"project.*"}, Publish: []string{"project.42"}}, time.Hour)

	c := rig.OpenStreamWith(t, h.URL, rig.TopicQuery("project.1", "project.42"), http.Header{"Cookie": {"hub_token=" + tok}, "Last-Event-Id": {"project.42=0-0"}})
	if c.Status != http.StatusOK {
		t.Fatalf("GET /events with the cookie = %d %s", c.Status, c.Body)
	}
	r := do(t, h.URL, call{method: "POST", path: "/publish", header: bearer(tok), body: eventJSON("project.42", "progress")})
	if r.status != http.StatusAccepted {
		t.Fatalf("POST /publish inside the claims = %d %q", r.status, r.msg)
	}
	if f := c.NextEvent(5 * time.Second); !strings.HasPrefix(f.ID, "project.42=") {
		t.Errorf("stream got %+v, want the event just published on project.42", f)
	}
	c.Close()

	req, _ := http.NewRequest(http.MethodGet, h.URL+"/topics", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var list struct{ Topics []struct{ Name string } }
	decodeJSON(t, resp, &list)
	for _, tp := range list.Topics {
		if !strings.HasPrefix(tp.Name, "project.") {
			t.Errorf("GET /topics shows %q to a token for project.*", tp.Name)
		}
	}
	if len(list.Topics) != 2 {
		t.Errorf("GET /topics = %+v, want project.1 and project.42", list.Topics)
	}
	rig.WaitZero(t, h.URL, admin, "hub_subscriptions", "hub_sse_connections_active")
}

// HS/RS confusion and the other public-key rules, on a hub that verifies RS256 only.
func TestAuthPublicKeyConfusion(t *testing.T) {
	rs := rig.StartRedis(t)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	der, _ := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	path := filepath.Join(t.TempDir(), "hub.pub.pem")
	if err := os.WriteFile(path, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	h := newEdge(t, rs, "HUB_AUTH_PUBLIC_KEY_FILE="+path)
	now := time.Now()
	g := auth.Grant{Subscribe: []string{"*"}, Publish: []string{"*"}}
	claims := hubClaims(g, now, now, now.Add(time.Hour))
	admin := forge(t, jwt.SigningMethodRS256, rsaKey, claims)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	otherRSA, _ := rsa.GenerateKey(rand.Reader, 2048)
	pub := eventJSON("t", "progress")
	check(t, h.URL, []call{
		{name: "HS256 signed with the public key", method: "POST", path: "/publish", header: bearer(forge(t, jwt.SigningMethodHS256, pemBytes, claims)), body: pub, status: 401, errHas: "signing method HS256 is invalid"},
		{name: "HS256 signed with the key's DER", path: "/events?topic=t", header: bearer(forge(t, jwt.SigningMethodHS256, der, claims)), status: 401, errHas: "HS256"},
		{name: "alg none", path: "/events?topic=t", header: bearer(forge(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claims)), status: 401, errHas: "none"},
		{name: "ES256 from an unknown key", path: "/events?topic=t", header: bearer(forge(t, jwt.SigningMethodES256, ecKey, claims)), status: 401, errHas: "ES256"},
		{name: "RS256 from another key", path: "/events?topic=t", header: bearer(forge(t, jwt.SigningMethodRS256, otherRSA, claims)), status: 401, errHas: "verification error"},
		{name: "RS256 from the key", path: "/topics/t/history", header: bearer(admin), status: 200},
	}, quiet(h, admin, "t"))
}

func decodeJSON(t testing.TB, resp *http.Response, v any) {
	t.Helper()
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s = %s", resp.Request.Method, resp.Request.URL.Path, resp.Status)
	}
	if err := jsonDecode(resp.Body, v); err != nil {
		t.Fatalf("decode %s: %v", resp.Request.URL.Path, err)
	}
}
