package server

import (
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/syncverse/hub/auth"
	"github.com/syncverse/hub/auth/authtest"
	"github.com/syncverse/hub/internal/rig"
)

// A hub that trusts an identity provider's JWKS URL, over real HTTP: tokens signed with the IdP's keys are
// accepted once the set is fetched, and the refreshes and the set's age are on /metrics.
func TestJWKSURLOnTheEdge(t *testing.T) {
	rs := rig.StartRedis(t)
	idp := authtest.NewIdP(t)
	idp.Add(t, "r1", jwt.SigningMethodRS256)
	h, admin := secureEdge(t, rs, "HUB_AUTH_JWKS_URL="+idp.URL(), "HUB_AUTH_AUDIENCE=*", "HUB_AUTH_JWKS_REFRESH=1s")
	now := time.Now()
	tok := idp.Sign(t, "r1", hubClaims(auth.Grant{Subscribe: []string{"project.*"}}, now, now, now.Add(time.Hour)))
	rig.Eventually(t, 5*time.Second, "GET /topics with the IdP's token", func() bool {
		return do(t, h.URL, call{path: "/topics", header: bearer(tok)}).status == http.StatusOK
	})
	rig.Eventually(t, 5*time.Second, "a second refresh", func() bool {
		v, _ := rig.MetricValue(rig.ScrapeWith(t, h.URL, admin), "hub_auth_jwks_refreshes_total", "outcome=ok")
		return v >= 2
	})
	fams := rig.ScrapeWith(t, h.URL, admin)
	if age, ok := rig.MetricValue(fams, "hub_auth_jwks_age_seconds"); !ok || age < 0 || age > 5 {
		t.Errorf("hub_auth_jwks_age_seconds = %v (%v), want the age of a set fetched within the last seconds", age, ok)
	}
	if v, ok := rig.MetricValue(fams, "hub_auth_jwks_unusable_keys"); !ok || v != 0 {
		t.Errorf("hub_auth_jwks_unusable_keys = %v (%v), want 0 shown", v, ok)
	}
	for _, o := range auth.RefreshOutcomes {
		if _, ok := rig.MetricValue(fams, "hub_auth_jwks_refreshes_total", "outcome="+o); !ok {
			t.Errorf("hub_auth_jwks_refreshes_total{outcome=%q} missing, want every outcome shown", o)
		}
	}
}

// A hub started while its IdP is down answers 503 in general words, for every token the IdP's keys would verify (the
// URL and the fetch's failure go to the log),
// and its key set's age is +Inf; the hub's own HS256 tokens still work.
func TestJWKSURLDownOnTheEdge(t *testing.T) {
	rs := rig.StartRedis(t)
	idp := authtest.NewIdP(t)
	idp.Add(t, "r1", jwt.SigningMethodRS256)
	idp.Set(func(s *authtest.State) { s.Down = true })
	h, admin := secureEdge(t, rs, "HUB_AUTH_JWKS_URL="+idp.URL(), "HUB_AUTH_AUDIENCE=*")
	rig.Eventually(t, 5*time.Second, "a failed fetch counted", func() bool {
		v, _ := rig.MetricValue(rig.ScrapeWith(t, h.URL, admin), "hub_auth_jwks_refreshes_total", "outcome=error")
		return v >= 1
	})
	now := time.Now()
	tok := idp.Sign(t, "r1", hubClaims(auth.Grant{Subscribe: []string{"*"}}, now, now, now.Add(time.Hour)))
	r := do(t, h.URL, call{path: "/topics", header: bearer(tok)})
	if r.status != http.StatusServiceUnavailable || !strings.Contains(r.msg, "signing keys are not available yet") ||
		strings.Contains(r.msg, "127.0.0.1") || strings.Contains(r.msg, "Service Unavailable") || strings.Contains(r.msg, "jwks_url") {
		t.Errorf("GET /topics with the IdP's token while it is down = %d %q, want 503 in general words (no URL, no fetch error)", r.status, r.msg)
	}
	if logs := h.logs.String(); !strings.Contains(logs, idp.URL()) || !strings.Contains(logs, "503 Service Unavailable") {
		t.Errorf("the log does not name the URL and why the fetch failed: %s", logs)
	}
	if r := do(t, h.URL, call{path: "/events?topic=a", header: bearer(tok)}); r.status != http.StatusServiceUnavailable {
		t.Errorf("GET /events with the IdP's token while it is down = %d %q, want 503", r.status, r.msg)
	}
	if age, _ := rig.MetricValue(rig.ScrapeWith(t, h.URL, admin), "hub_auth_jwks_age_seconds"); !math.IsInf(age, 1) {
		t.Errorf("hub_auth_jwks_age_seconds = %v before any fetch, want +Inf", age)
	}
}
