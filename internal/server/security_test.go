package server

import (
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/syncverse/hub/auth"
	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/internal/tokentest"
)

const testSecret = tokentest.Secret

// secureEdge serves the edge with HS256 auth (anonymous off) and returns it with a token that may read and publish
// everything, for the checks that must see past the rules under test.
func secureEdge(t *testing.T, rs *rig.Redis, env ...string) (*edge, string) {
	t.Helper()
	h := newEdge(t, rs, append([]string{"HUB_AUTH_HMAC_SECRET=" + testSecret}, env...)...)
	return h, signToken(t, auth.Grant{Subscribe: []string{"*"}, Publish: []string{"*"}}, time.Hour)
}

// signToken is the HS256 token of these tests (tokentest owns the secret and the signing).
var signToken = tokentest.Sign

func bearer(tok string) http.Header { return rig.Bearer(tok) }

// forge signs arbitrary claims with any method and key, for the tokens the hub must refuse.
func forge(t testing.TB, m jwt.SigningMethod, key any, claims jwt.MapClaims) string {
	t.Helper()
	tok, err := jwt.NewWithClaims(m, claims).SignedString(key)
	if err != nil {
		t.Fatalf("sign %s: %v", m.Alg(), err)
	}
	return tok
}

// hubClaims are valid claims for grant g, shifted by the caller to make them invalid.
func hubClaims(g auth.Grant, iat, nbf, exp time.Time) jwt.MapClaims {
	return jwt.MapClaims{"iat": iat.Unix(), "nbf": nbf.Unix(), "exp": exp.Unix(),
		"hub": map[string]any{"subscribe": g.Subscribe, "publish": g.Publish}}
}

// call is one request of a rule table.
type call struct {
	name   string
	method string
	path   string
	header http.Header
	body   string
	status int
	errHas string // a substring of the JSON error
}

// reply is what came back: the status, the JSON error (or the raw body when it was not JSON) and the headers.
type reply struct {
	status int
	msg    string
	isJSON bool
	header http.Header
}

// request is c as a request to base (GET when c names no method). A Host header of c becomes the request's Host,
// the one net/http sends.
func (c call) request(t testing.TB, ctx context.Context, base string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, cmp.Or(c.method, http.MethodGet), base+c.path, strings.NewReader(c.body))
	if err != nil {
		t.Fatalf("%s: new request: %v", c.name, err)
	}
	for k, vs := range c.header {
		req.Header[k] = vs
	}
	if h := c.header.Get("Host"); h != "" {
		req.Host = h
	}
	return req
}

// do sends c.
func do(t testing.TB, base string, c call) reply {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req := c.request(t, ctx, base)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %s %s: %v", c.name, req.Method, c.path, err)
	}
	defer resp.Body.Close()
	r := reply{status: resp.StatusCode, header: resp.Header}
	if resp.StatusCode == http.StatusOK && resp.Header.Get("Content-Type") == "text/event-stream" {
		return r // a stream: the caller only wanted to know it opened
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var e struct{ Error string }
	if json.Unmarshal(b, &e) != nil || e.Error == "" {
		r.msg = string(b)
		return r
	}
	r.msg, r.isJSON = e.Error, true
	return r
}

// check runs a table of calls against base; after each one, unchanged checks that it left nothing behind.
func check(t *testing.T, base string, calls []call, unchanged func(t *testing.T)) {
	t.Helper()
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			r := do(t, base, c)
			if r.status != c.status || !strings.Contains(r.msg, c.errHas) {
				t.Errorf("%s %s = %d %q, want %d with %q", c.method, clipPath(c.path), r.status, r.msg, c.status, c.errHas)
			}
			if r.status >= 400 && !r.isJSON {
				t.Errorf("%s %s = %d with body %q, want a JSON {\"error\"}", c.method, clipPath(c.path), r.status, r.msg)
			}
			unchanged(t)
		})
	}
}

// quiet checks that nothing was published on topics and that no subscription or stream is left open.
func quiet(h *edge, token string, topics ...string) func(t *testing.T) {
	return func(t *testing.T) {
		t.Helper()
		for _, topic := range topics {
			if n := h.xlen(t, topic); n != 0 {
				t.Errorf("XLEN %s = %d, want 0: a refused request published", topic, n)
			}
		}
		rig.WaitZero(t, h.URL, token, "hub_subscriptions", "hub_sse_connections_active")
	}
}

func eventJSON(topic, typ string) string {
	b, _ := json.Marshal(map[string]any{"topic": topic, "type": typ, "data": map[string]string{"workflow": "wf-1"}})
	return string(b)
}

func clipPath(p string) string {
	if len(p) > 80 {
		return p[:80] + "…"
	}
	return p
}

func jsonDecode(r io.Reader, v any) error { return json.NewDecoder(r).Decode(v) }
