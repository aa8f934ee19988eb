// Package authtest is an identity provider for tests: a JWKS published over HTTP, keys that rotate, tokens signed
// with real RS256 and ES256 keys.
package authtest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// IdP is an identity provider as the hub sees one, for tests: a JWKS at a URL, keys that come and go, tokens signed with
// real keys. Set makes it fail the way an IdP does.
type IdP struct {
	srv   *httptest.Server
	mu    sync.Mutex
	keys  map[string]idpKey
	order []string
	state State
	hits  atomic.Int32
}

type idpKey struct {
	method jwt.SigningMethod
	priv   crypto.Signer
}

// NewIdP starts one on a loopback port; it stops with the test.
func NewIdP(t testing.TB) *IdP {
	p := &IdP{keys: map[string]idpKey{}}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

// URL is where the key set is published.
func (p *IdP) URL() string { return p.srv.URL + "/realms/hub/protocol/openid-connect/certs" }

func (p *IdP) serve(w http.ResponseWriter, _ *http.Request) {
	p.hits.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.state.Down:
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		return
	case p.state.Garbage:
		_, _ = w.Write([]byte(`<html>login</html>`))
		return
	}
	set := append([]map[string]string(nil), p.state.Extra...)
	for _, kid := range p.order {
		set = append(set, jwkOf(kid, p.keys[kid]))
	}
	if p.state.CacheControl != "" {
		w.Header().Set("Cache-Control", p.state.CacheControl)
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"keys": set})
}

func jwkOf(kid string, k idpKey) map[string]string {
	b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	switch pub := k.priv.Public().(type) {
	case *rsa.PublicKey:
		return map[string]string{"kty": "RSA", "kid": kid, "alg": "RS256", "use": "sig", "n": b64(pub.N.Bytes()),
			"e": b64(big.NewInt(int64(pub.E)).Bytes())}
	case *ecdsa.PublicKey:
		return map[string]string{"kty": "EC", "kid": kid, "crv": "P-256", "x": b64(pub.X.FillBytes(make([]byte, 32))),
			"y": b64(pub.Y.FillBytes(make([]byte, 32)))}
	}
	panic("unsupported key")
}

// Add generates a key (RSA 2048 for RS256, P-256 for ES256) and publishes it under kid.
func (p *IdP) Add(t testing.TB, kid string, m jwt.SigningMethod) {
	t.Helper()
	var priv crypto.Signer
	var err error
	if m == jwt.SigningMethodRS256 {
		priv, err = rsa.GenerateKey(rand.Reader, 2048)
	} else {
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys[kid] = idpKey{m, priv}
	p.order = append(p.order, kid)
}

// Remove stops publishing kid; the IdP can still sign with it, as a token issued before the rotation was.
func (p *IdP) Remove(kid string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, k := range p.order {
		if k == kid {
			p.order = append(p.order[:i], p.order[i+1:]...)
			return
		}
	}
}

// Set changes how it answers: Down (503) or Garbage (200 with HTML), and the Cache-Control header.
func (p *IdP) Set(f func(s *State)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(&p.state)
}

// State is how the IdP answers.
type State struct {
	Down         bool
	Garbage      bool
	CacheControl string
	Extra        []map[string]string // published before the IdP's own keys, as given (keys the hub cannot use)
}

// Hits counts the requests for the key set.
func (p *IdP) Hits() int { return int(p.hits.Load()) }

// Sign returns a token signed with kid's key, carrying c.
func (p *IdP) Sign(t testing.TB, kid string, c jwt.Claims) string {
	t.Helper()
	p.mu.Lock()
	k, ok := p.keys[kid]
	p.mu.Unlock()
	if !ok {
		t.Fatalf("no key %s", kid)
	}
	tok := jwt.NewWithClaims(k.method, c)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(k.priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
