package auth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/syncverse/hub/auth/authtest"
	"github.com/syncverse/hub/internal/rig"
)

// outcomes records what OnRefresh reports.
type outcomes struct {
	mu   sync.Mutex
	seen map[string]int
}

func (o *outcomes) add(s string) { o.mu.Lock(); o.seen[s]++; o.mu.Unlock() }
func (o *outcomes) get(s string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.seen[s]
}

// runVerifier starts v's refresher, owned by the test: it ends with the test.
func runVerifier(t *testing.T, v *Verifier) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { v.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

func accepts(v *Verifier, tok string) bool { _, err := v.Verify(tok); return err == nil }

// The IdP rotates its keys while the hub runs: a new kid is accepted at once, a removed key is refused after the
// next refresh, and an IdP that goes down (or serves garbage) leaves the last good keys in force.
func TestJWKSURLFollowsTheIdentityProvider(t *testing.T) {
	idp := authtest.NewIdP(t)
	idp.Add(t, "r1", jwt.SigningMethodRS256)
	idp.Add(t, "e1", jwt.SigningMethodES256)
	seen := &outcomes{seen: map[string]int{}}
	v, err := NewVerifier(Config{JWKSURL: idp.URL(), JWKSRefresh: 100 * time.Millisecond, OnRefresh: seen.add})
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	runVerifier(t, v)
	rig.Eventually(t, 10*time.Second, "the first fetch", func() bool { return !v.KeysFetched().IsZero() })
	c := validClaims(Grant{Subscribe: []string{"a"}})
	for _, kid := range []string{"r1", "e1"} {
		if _, err := v.Verify(idp.Sign(t, kid, c)); err != nil {
			t.Fatalf("Verify(%s) = %v, want accepted", kid, err)
		}
	}

	idp.Add(t, "r2", jwt.SigningMethodRS256)
	if _, err := v.Verify(idp.Sign(t, "r2", c)); err != nil {
		t.Fatalf("Verify(new kid r2) = %v, want accepted without waiting for the refresh", err)
	}
	old := idp.Sign(t, "r1", c)
	idp.Remove("r1")
	rig.Eventually(t, 10*time.Second, "the removed key r1 refused", func() bool { return !accepts(v, old) })
	if _, err := v.Verify(old); err == nil || !strings.Contains(err.Error(), `kid "r1"`) {
		t.Errorf("Verify(removed kid) = %v, want a refusal naming the kid", err)
	}

	for _, fail := range []struct {
		name    string
		f       func(s *authtest.State)
		outcome string
	}{
		{"down", func(s *authtest.State) { s.Down = true }, RefreshError},
		{"garbage", func(s *authtest.State) { s.Down, s.Garbage = false, true }, RefreshInvalid},
	} {
		before := seen.get(fail.outcome)
		idp.Set(fail.f)
		rig.Eventually(t, 10*time.Second, fail.name+": a failed refresh", func() bool { return seen.get(fail.outcome) >= before+2 })
		for _, kid := range []string{"r2", "e1"} {
			if _, err := v.Verify(idp.Sign(t, kid, c)); err != nil {
				t.Errorf("%s: Verify(%s) = %v, want the last good keys still in force", fail.name, kid, err)
			}
		}
	}
	if age := time.Since(v.KeysFetched()); age < 100*time.Millisecond {
		t.Errorf("KeysFetched() is %v old while the IdP fails, want the last good fetch's time", age)
	}
}

// A hub started while the IdP is down refuses every token, says why, and accepts them once the IdP is back.
func TestJWKSURLDownAtStart(t *testing.T) {
	idp := authtest.NewIdP(t)
	idp.Add(t, "r1", jwt.SigningMethodRS256)
	idp.Set(func(s *authtest.State) { s.Down = true })
	seen := &outcomes{seen: map[string]int{}}
	v, err := NewVerifier(Config{JWKSURL: idp.URL(), JWKSRefresh: 100 * time.Millisecond, OnRefresh: seen.add})
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	runVerifier(t, v)
	rig.Eventually(t, 10*time.Second, "a failed fetch", func() bool { return seen.get(RefreshError) > 0 })
	tok := idp.Sign(t, "r1", validClaims(Grant{Subscribe: []string{"a"}}))
	_, err = v.Verify(tok)
	var ae *Error
	if !errors.As(err, &ae) || ae.Reason != ReasonNoKeys || ae.Status() != http.StatusServiceUnavailable ||
		!strings.Contains(err.Error(), "signing keys are not available yet") {
		t.Fatalf("Verify before any key set = %v, want a 503 no_keys", err)
	}
	for _, leak := range []string{"127.0.0.1", "auth.jwks_url", "503 Service Unavailable", "down for maintenance"} {
		if strings.Contains(err.Error(), leak) {
			t.Errorf("Verify before any key set = %q: tells the client %q; the URL and the fetch's failure belong in the log", err, leak)
		}
	}
	if !v.KeysFetched().IsZero() {
		t.Errorf("KeysFetched() = %v before any good fetch, want zero", v.KeysFetched())
	}
	idp.Set(func(s *authtest.State) { s.Down = false })
	rig.Eventually(t, 10*time.Second, "the token accepted once the IdP is back", func() bool { return accepts(v, tok) })
}

// An unknown kid makes the hub fetch the set at most once per JWKSRefetch, however many tokens name one.
func TestJWKSURLRefetchesForAnUnknownKidAtMostOncePerInterval(t *testing.T) {
	idp := authtest.NewIdP(t)
	idp.Add(t, "r1", jwt.SigningMethodRS256)
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	v, err := NewVerifier(Config{JWKSURL: idp.URL(), JWKSRefresh: time.Hour,
		Now: func() time.Time { return time.Unix(0, clock.Load()) }})
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	c := validClaims(Grant{Subscribe: []string{"a"}})
	if _, err := v.Verify(idp.Sign(t, "r1", c)); err != nil || idp.Hits() != 1 {
		t.Fatalf("first Verify = %v after %d fetches, want accepted after 1", err, idp.Hits())
	}
	idp.Add(t, "r2", jwt.SigningMethodRS256)
	r2 := idp.Sign(t, "r2", c)
	for i := 0; i < 5; i++ {
		if accepts(v, r2) {
			t.Fatalf("Verify(r2) accepted within 30s of the last kid fetch")
		}
	}
	if n := idp.Hits(); n != 1 {
		t.Errorf("fetches after 5 unknown kids within 30s = %d, want 1", n)
	}
	clock.Add(int64(DefaultJWKSRefetch))
	if _, err := v.Verify(r2); err != nil || idp.Hits() != 2 {
		t.Errorf("Verify(r2) 30s later = %v after %d fetches, want accepted after 2", err, idp.Hits())
	}
}

// A shorter Cache-Control max-age brings the next refresh forward.
func TestJWKSURLHonoursMaxAge(t *testing.T) {
	idp := authtest.NewIdP(t)
	idp.Add(t, "e1", jwt.SigningMethodES256)
	idp.Set(func(s *authtest.State) { s.CacheControl = "public, max-age=1" })
	v, err := NewVerifier(Config{JWKSURL: idp.URL(), JWKSRefresh: time.Hour})
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	runVerifier(t, v)
	rig.Eventually(t, 10*time.Second, "a second fetch within max-age=1", func() bool { return idp.Hits() >= 2 })
	for in, want := range map[string]time.Duration{"max-age=60": time.Minute, "no-cache, MAX-AGE=\"5\"": 5 * time.Second,
		"no-store": 0, "max-age=-1": 0, "max-age=x": 0} {
		if got := maxAge([]string{in}); got != want {
			t.Errorf("maxAge(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestJWKSURLRefusesPlainHTTPBeyondLoopback(t *testing.T) {
	for _, u := range []string{"https://idp.example.com/certs", "http://127.0.0.1:8081/certs", "http://localhost/certs", "http://[::1]:80/"} {
		if _, err := NewVerifier(Config{JWKSURL: u}); err != nil {
			t.Errorf("NewVerifier(jwks_url %s) = %v, want accepted", u, err)
		}
	}
	for _, u := range []string{"http://idp.example.com/certs", "http://10.0.0.1/certs", "ftp://idp/certs", "idp.example.com", "https://"} {
		if _, err := NewVerifier(Config{JWKSURL: u}); err == nil || !strings.Contains(err.Error(), "auth.jwks_url") {
			t.Errorf("NewVerifier(jwks_url %s) = %v, want refused", u, err)
		}
	}
}

// A key set URL on loopback that redirects to plain http off loopback is not followed: the keys there could be
// anyone's. The test's transport dials the second server for every host, so the redirect target is a real server
// under a name that is not loopback.
func TestJWKSURLRedirectsAreHeldToTheSameRule(t *testing.T) {
	elsewhere := authtest.NewIdP(t)
	elsewhere.Add(t, "evil", jwt.SigningMethodRS256)
	target := strings.Replace(elsewhere.URL(), "127.0.0.1", "keys.example.net", 1)
	hop := httptest.NewServer(http.RedirectHandler(target, http.StatusFound))
	t.Cleanup(hop.Close)
	addr := strings.TrimPrefix(elsewhere.URL()[:strings.Index(elsewhere.URL(), "/realms")], "http://")
	tr := &http.Transport{DialContext: func(ctx context.Context, network, a string) (net.Conn, error) {
		if strings.HasPrefix(a, "keys.example.net:") {
			a = addr
		}
		return (&net.Dialer{}).DialContext(ctx, network, a)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	seen := &outcomes{seen: map[string]int{}}
	v, err := NewVerifier(Config{JWKSURL: hop.URL + "/certs", JWKSRefresh: time.Hour, OnRefresh: seen.add,
		HTTPClient: &http.Client{Transport: tr, Timeout: 10 * time.Second}})
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	runVerifier(t, v)
	rig.Eventually(t, 10*time.Second, "the first fetch to end", func() bool { return seen.get(RefreshError)+seen.get(RefreshOK) > 0 })
	if tok := elsewhere.Sign(t, "evil", validClaims(Grant{Publish: []string{"*"}})); accepts(v, tok) {
		t.Fatalf("a token signed with a key fetched through a redirect to plain http off loopback was accepted")
	}
	if seen.get(RefreshError) == 0 || elsewhere.Hits() != 0 {
		t.Errorf("outcomes %v, %d requests to the redirect target; want an error and none", seen.seen, elsewhere.Hits())
	}
	// The same redirect to loopback is followed.
	back := httptest.NewServer(http.RedirectHandler(elsewhere.URL(), http.StatusFound))
	t.Cleanup(back.Close)
	v2, err := NewVerifier(Config{JWKSURL: back.URL + "/certs", JWKSRefresh: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if tok := elsewhere.Sign(t, "evil", validClaims(Grant{Publish: []string{"*"}})); !accepts(v2, tok) {
		t.Errorf("a redirect from loopback to loopback was not followed")
	}
}

// A key set with keys the hub cannot use (an RSA key labelled PS256, a 1024-bit RSA key) still brings in the keys
// beside them, at the first fetch too; the others are counted and told to OnProblem. A set with no usable key at all
// is an invalid fetch.
func TestJWKSURLSkipsUnusableKeys(t *testing.T) {
	b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	big2048, _ := rsa.GenerateKey(rand.Reader, 2048)
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	rsaJWK := func(kid, alg string, k *rsa.PrivateKey) map[string]string {
		return map[string]string{"kty": "RSA", "kid": kid, "alg": alg, "use": "sig", "n": b64(k.N.Bytes()), "e": "AQAB"}
	}
	idp := authtest.NewIdP(t)
	idp.Add(t, "r2", jwt.SigningMethodRS256)
	idp.Set(func(s *authtest.State) {
		s.Extra = []map[string]string{rsaJWK("ps", "PS256", big2048), rsaJWK("weak", "RS256", small)}
	})
	seen := &outcomes{seen: map[string]int{}}
	var mu sync.Mutex
	var problems []string
	v, err := NewVerifier(Config{JWKSURL: idp.URL(), JWKSRefresh: 100 * time.Millisecond, OnRefresh: seen.add,
		OnProblem: func(err error) { mu.Lock(); problems = append(problems, err.Error()); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(idp.Sign(t, "r2", validClaims(Grant{Subscribe: []string{"a"}}))); err != nil {
		t.Fatalf("Verify(r2) at first start beside two unusable keys = %v, want accepted", err)
	}
	if n := v.UnusableKeys(); n != 2 {
		t.Errorf("UnusableKeys() = %d, want 2", n)
	}
	mu.Lock()
	told := strings.Join(problems, "\n")
	mu.Unlock()
	if !strings.Contains(told, `kid "ps"`) || !strings.Contains(told, "PS256") || !strings.Contains(told, `kid "weak"`) || !strings.Contains(told, "1024 bits") {
		t.Errorf("OnProblem was told %q; want each left-out key named with why", told)
	}
	runVerifier(t, v)
	idp.Remove("r2")
	rig.Eventually(t, 10*time.Second, "a set of unusable keys only to count as invalid", func() bool { return seen.get(RefreshInvalid) > 0 })
}
