package server

import (
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/syncverse/hub/auth"
	"github.com/syncverse/hub/internal/config"
	"github.com/syncverse/hub/internal/rig"
)

// sessionCall sends one request to /auth/session and returns the answer, its body read.
func sessionCall(t *testing.T, base, method string, h http.Header, form url.Values) (*http.Response, []byte) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, base+"/auth/session", body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s /auth/session: %v", method, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func sessionCookie(t *testing.T, resp *http.Response) *http.Cookie {
	t.Helper()
	for _, c := range resp.Cookies() {
		if c.Name == auth.DefaultCookie || c.Name == auth.HostCookie(auth.DefaultCookie) {
			return c
		}
	}
	return nil
}

func decodeSession(t *testing.T, b []byte) sessionReply {
	t.Helper()
	var r sessionReply
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("session answer %q: %v", b, err)
	}
	return r
}

// Signing in with a token, by header or form, sets an HttpOnly, SameSite=Strict cookie that ends with the token;
// the cookie then works on every route, GET says who is signed in, DELETE signs out.
func TestSessionSignInAndOut(t *testing.T) {
	rs := rig.StartRedis(t)
	h, _ := secureEdge(t, rs, "HUB_AUTH_LOGIN_URL=https://sso.example.com/hub")
	g := auth.Grant{Subscribe: []string{"project.*"}, Publish: []string{"project.42"}}
	tok := signToken(t, g, 30*time.Minute)
	for name, send := range map[string]func() (*http.Response, []byte){
		"header": func() (*http.Response, []byte) { return sessionCall(t, h.URL, "POST", bearer(tok), nil) },
		"form":   func() (*http.Response, []byte) { return sessionCall(t, h.URL, "POST", nil, url.Values{"token": {tok}}) },
	} {
		resp, b := send()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST /auth/session (%s) = %d %s", name, resp.StatusCode, b)
		}
		r := decodeSession(t, b)
		if !slices.Equal(r.Subscribe, g.Subscribe) || !slices.Equal(r.Publish, g.Publish) || r.Exp == nil ||
			time.Until(time.Unix(*r.Exp, 0)) > 30*time.Minute || time.Until(time.Unix(*r.Exp, 0)) < 29*time.Minute {
			t.Errorf("POST /auth/session (%s) = %s, want the grant and exp in 30m", name, b)
		}
		c := sessionCookie(t, resp)
		if c == nil || c.Value != tok || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Secure ||
			c.MaxAge > 30*60 || c.MaxAge < 29*60 {
			t.Fatalf("POST /auth/session (%s) cookie = %+v, want the token, HttpOnly, SameSite=Strict, Path=/, not Secure on loopback, Max-Age up to exp", name, c)
		}
		if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("POST /auth/session Cache-Control = %q, want no-store", cc)
		}
		withCookie := http.Header{"Cookie": {c.Name + "=" + c.Value}}
		if resp, b := sessionCall(t, h.URL, "GET", withCookie, nil); resp.StatusCode != 200 || decodeSession(t, b).Exp == nil ||
			decodeSession(t, b).LoginURL != "https://sso.example.com/hub" || r.LoginURL != "https://sso.example.com/hub" {
			t.Errorf("GET /auth/session with the cookie = %d %s, want who is signed in and login_url (for the console's prompt before the session ends)", resp.StatusCode, b)
		}
		if r := do(t, h.URL, call{path: "/topics/project.1/history", header: withCookie}); r.status != 200 {
			t.Errorf("GET history with the session cookie = %d %q", r.status, r.msg)
		}
	}

	resp, b := sessionCall(t, h.URL, "GET", nil, nil)
	var e struct{ Error, Login_URL string }
	_ = json.Unmarshal(b, &e)
	if resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") ||
		!strings.Contains(e.Error, "authentication required") || e.Login_URL != "https://sso.example.com/hub" {
		t.Errorf("GET /auth/session without credentials = %d %s (WWW-Authenticate %q), want 401 with the error and login_url",
			resp.StatusCode, b, resp.Header.Get("WWW-Authenticate"))
	}

	resp, b = sessionCall(t, h.URL, "DELETE", nil, nil)
	c := sessionCookie(t, resp)
	if resp.StatusCode != http.StatusNoContent || c == nil || c.Value != "" || c.MaxAge >= 0 || !c.HttpOnly || c.Path != "/" {
		t.Errorf("DELETE /auth/session = %d %s, cookie %+v; want 204 clearing the cookie", resp.StatusCode, b, c)
	}
}

// A token that does not verify sets no cookie and says why; so does a request without one.
func TestSessionRefusals(t *testing.T) {
	rs := rig.StartRedis(t)
	h, _ := secureEdge(t, rs)
	now := time.Now()
	g := auth.Grant{Subscribe: []string{"a"}}
	expired := forge(t, jwt.SigningMethodHS256, []byte(testSecret), hubClaims(g, now.Add(-time.Hour), now.Add(-time.Hour), now.Add(-time.Second)))
	wrong := forge(t, jwt.SigningMethodHS256, []byte("some-other-secret-0123456789abcdef!!"), hubClaims(g, now, now, now.Add(time.Hour)))
	many := make([]string, 40)
	for i := range many {
		many[i] = "project." + strings.Repeat("x", 90) + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	huge := signToken(t, auth.Grant{Subscribe: many}, time.Hour)
	good := signToken(t, g, time.Hour)
	crossSite := http.Header{"Sec-Fetch-Site": {"cross-site"}, "Origin": {"https://evil.example"}, "Authorization": {"Bearer " + good}}
	for _, c := range []struct {
		name   string
		method string
		h      http.Header
		form   url.Values
		status int
		errHas string
	}{
		{"no token", "POST", nil, url.Values{}, 400, "no token"},
		{"expired", "POST", bearer(expired), nil, 401, "expired"},
		{"wrong signature", "POST", nil, url.Values{"token": {wrong}}, 401, "signature is invalid"},
		{"not a JWT", "POST", nil, url.Values{"token": {"hunter2"}}, 401, "malformed token"},
		{"two tokens", "POST", nil, url.Values{"token": {good, good}}, 401, "several token fields"},
		{"Basic", "POST", http.Header{"Authorization": {"Basic dXNlcjpwdw=="}}, nil, 401, "Bearer"},
		{"too big for a cookie", "POST", bearer(huge), nil, 400, "too long for a browser to keep in a cookie"},
		{"cross-site sign-in", "POST", crossSite, nil, 403, "cross-origin request"},
		{"cross-site sign-out", "DELETE", crossSite, nil, 403, "cross-origin request"},
	} {
		resp, b := sessionCall(t, h.URL, c.method, c.h, c.form)
		var e struct{ Error string }
		_ = json.Unmarshal(b, &e)
		if resp.StatusCode != c.status || !strings.Contains(e.Error, c.errHas) {
			t.Errorf("%s: %s /auth/session = %d %s, want %d with %q", c.name, c.method, resp.StatusCode, b, c.status, c.errHas)
		}
		if ck := sessionCookie(t, resp); ck != nil {
			t.Errorf("%s: %s /auth/session set the cookie %+v", c.name, c.method, ck)
		}
	}
}

// Off loopback the cookie is Secure; a hub without auth has no session to sign in to but says who everyone is.
func TestSessionSecureCookieAndAnonymousHub(t *testing.T) {
	rs := rig.StartRedis(t)
	h, _ := secureEdge(t, rs, "HUB_LISTEN=0.0.0.0:8080")
	resp, b := sessionCall(t, h.URL, "POST", bearer(signToken(t, auth.Grant{Subscribe: []string{"a"}}, time.Hour)), nil)
	if c := sessionCookie(t, resp); resp.StatusCode != 200 || c == nil || !c.Secure {
		t.Errorf("POST /auth/session on a public listen = %d %s, cookie %+v; want Secure", resp.StatusCode, b, c)
	}
	anon := newEdge(t, rs)
	resp, b = sessionCall(t, anon.URL, "GET", nil, nil)
	if r := decodeSession(t, b); resp.StatusCode != 200 || !slices.Equal(r.Subscribe, []string{"*"}) || r.Exp != nil {
		t.Errorf("GET /auth/session on an anonymous hub = %d %s, want every topic and no exp", resp.StatusCode, b)
	}
	resp, b = sessionCall(t, anon.URL, "POST", bearer(signToken(t, auth.Grant{Subscribe: []string{"a"}}, time.Hour)), nil)
	if resp.StatusCode != 400 || !strings.Contains(string(b), "no auth configured") {
		t.Errorf("POST /auth/session on an anonymous hub = %d %s, want 400 saying there is nothing to sign in to", resp.StatusCode, b)
	}
}

// A plain IdP-style token whose groups map to roles in config.yaml gets exactly the roles' patterns, over HTTP.
func TestSessionGrantFromRoles(t *testing.T) {
	rs := rig.StartRedis(t)
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(`auth:
  roles_claim: realm_access.roles
  roles:
    operators: {subscribe: ["*"], publish: []}
    agents: {subscribe: ["project.*"], publish: ["project.*"]}
    admins: {subscribe: ["*"], publish: ["*"]}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	h, _ := secureEdge(t, rs, "HUB_CONFIG="+path)
	now := time.Now()
	tok := forge(t, jwt.SigningMethodHS256, []byte(testSecret), jwt.MapClaims{"sub": "ada", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		"realm_access": map[string]any{"roles": []string{"default-roles-hub", "operators", "agents"}}})
	resp, b := sessionCall(t, h.URL, "GET", bearer(tok), nil)
	r := decodeSession(t, b)
	if resp.StatusCode != 200 || r.Subject != "ada" || !slices.Equal(r.Subscribe, []string{"*", "project.*"}) || !slices.Equal(r.Publish, []string{"project.*"}) {
		t.Errorf("GET /auth/session for roles operators+agents = %d %s, want subscribe [* project.*], publish [project.*]", resp.StatusCode, b)
	}
	if r := do(t, h.URL, call{method: "POST", path: "/publish", header: bearer(tok), body: eventJSON("ops", "progress")}); r.status != 403 {
		t.Errorf("POST /publish outside the roles' patterns = %d %q, want 403", r.status, r.msg)
	}
}

// auth.cookie_secure: auto makes the cookie Secure, named __Host-hub_token, when a trusted proxy says the client
// came over https (not when anyone else says so); always makes it so on plain loopback HTTP, never never. The
// __Host- cookie signs the browser in, and signing out clears both names.
func TestSessionCookieSecureBehindAProxy(t *testing.T) {
	rs := rig.StartRedis(t)
	tok := signToken(t, auth.Grant{Subscribe: []string{"a"}}, time.Hour)
	host := auth.HostCookie(auth.DefaultCookie)
	signIn := func(h *edge, xfp string) *http.Cookie {
		t.Helper()
		hd := bearer(tok)
		if xfp != "" {
			hd.Set("X-Forwarded-Proto", xfp)
		}
		resp, b := sessionCall(t, h.URL, "POST", hd, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("POST /auth/session = %d %s", resp.StatusCode, b)
		}
		return sessionCookie(t, resp)
	}
	for _, tc := range []struct {
		name, mode, proxies, xfp string
		secure                   bool
	}{
		{"auto, https from a trusted proxy", "auto", "127.0.0.1", "https", true},
		{"auto, https from anyone", "auto", "", "https", false},
		{"auto, http from a trusted proxy", "auto", "127.0.0.1", "http", false},
		{"always", "always", "", "", true},
		{"never, https from a trusted proxy", "never", "127.0.0.1", "https", false},
	} {
		h, _ := secureEdge(t, rs, "HUB_AUTH_COOKIE_SECURE="+tc.mode, "HUB_LIMITS_TRUSTED_PROXIES="+tc.proxies)
		c := signIn(h, tc.xfp)
		wantName := auth.DefaultCookie
		if tc.secure {
			wantName = host
		}
		if c == nil || c.Secure != tc.secure || c.Name != wantName || c.Path != "/" || c.Domain != "" {
			t.Errorf("%s: cookie %+v; want %s, Secure=%v, Path=/, no Domain", tc.name, c, wantName, tc.secure)
			continue
		}
		withCookie := http.Header{"Cookie": {c.Name + "=" + c.Value}}
		if resp, b := sessionCall(t, h.URL, "GET", withCookie, nil); resp.StatusCode != 200 {
			t.Errorf("%s: GET /auth/session with the %s cookie = %d %s", tc.name, c.Name, resp.StatusCode, b)
		}
	}
	h, _ := secureEdge(t, rs)
	resp, _ := sessionCall(t, h.URL, "DELETE", nil, nil)
	cleared := map[string]bool{}
	for _, c := range resp.Cookies() {
		cleared[c.Name] = c.MaxAge < 0 && (c.Name != host || c.Secure)
	}
	if !cleared[host] || !cleared[auth.DefaultCookie] {
		t.Errorf("DELETE /auth/session cleared %v; want both %s (Secure) and %s", cleared, host, auth.DefaultCookie)
	}
	if _, err := config.Load(flag.NewFlagSet("x", flag.ContinueOnError), nil, func(k string) string {
		return map[string]string{"HUB_AUTH_COOKIE_SECURE": "sometimes"}[k]
	}); err == nil || !strings.Contains(err.Error(), "auth.cookie_secure") {
		t.Errorf("auth.cookie_secure: sometimes = %v, want refused naming the key", err)
	}
}
