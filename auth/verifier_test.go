package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

var testSecret = []byte("0123456789abcdef0123456789abcdef")

func testVerifier(t testing.TB) *Verifier {
	t.Helper()
	v, err := NewVerifier(Config{HMACSecret: testSecret})
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	return v
}

func validClaims(g Grant) claims {
	now := time.Now()
	return claims{RegisteredClaims: jwt.RegisteredClaims{
		IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour)),
	}, Hub: g}
}

func signHS(t testing.TB, secret []byte, c claims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(secret)
	if err != nil {
		t.Fatalf("sign: %v", err)
	}
	return s
}

func writePEM(t testing.TB, pub crypto.PublicKey) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestVerifyHS256(t *testing.T) {
	v := testVerifier(t)
	g := Grant{Subscribe: []string{"project.*"}, Publish: []string{"project.42"}}
	mod := func(f func(*claims)) claims { c := validClaims(g); f(&c); return c }
	now := time.Now()
	cases := []struct {
		name   string
		token  string
		reason Reason
		errHas string
	}{
		{"valid", signHS(t, testSecret, validClaims(g)), "", ""},
		{"expired", signHS(t, testSecret, mod(func(c *claims) { c.ExpiresAt = jwt.NewNumericDate(now.Add(-time.Second)) })), ReasonExpired, "expired"},
		{"expired within the skew", signHS(t, testSecret, mod(func(c *claims) { c.ExpiresAt = jwt.NewNumericDate(now.Add(-2 * time.Second)) })), ReasonExpired, "expired"},
		{"no exp", signHS(t, testSecret, mod(func(c *claims) { c.ExpiresAt = nil })), ReasonBadToken, "exp"},
		{"not yet valid", signHS(t, testSecret, mod(func(c *claims) { c.NotBefore = jwt.NewNumericDate(now.Add(time.Minute)) })), ReasonBadToken, "not valid yet"},
		{"nbf within the skew", signHS(t, testSecret, mod(func(c *claims) { c.NotBefore = jwt.NewNumericDate(now.Add(5 * time.Second)) })), "", ""},
		{"issued in the future", signHS(t, testSecret, mod(func(c *claims) { c.IssuedAt = jwt.NewNumericDate(now.Add(time.Minute)) })), ReasonBadToken, "iat"},
		{"wrong secret", signHS(t, []byte("another-secret-of-32-bytes-length!"), validClaims(g)), ReasonBadToken, "signature"},
		{"bad grant", signHS(t, testSecret, validClaims(Grant{Subscribe: []string{"a*b"}})), ReasonBadToken, "hub.subscribe[0]"},
		{"none", noneToken(t, validClaims(g)), ReasonBadToken, "none"},
		{"HS512", signWith(t, jwt.SigningMethodHS512, testSecret, validClaims(g)), ReasonBadToken, "HS512"},
		{"garbage", "a.b.c", ReasonBadToken, "malformed"},
	}
	for _, c := range cases {
		id, err := v.Verify(c.token)
		var ae *Error
		switch {
		case c.reason == "" && err != nil:
			t.Errorf("%s: Verify = %v, want ok", c.name, err)
		case c.reason == "" && !id.Grant.CanPublish("project.42"):
			t.Errorf("%s: Verify grant = %+v, want %+v", c.name, id.Grant, g)
		case c.reason != "" && (!errors.As(err, &ae) || ae.Reason != c.reason || !strings.Contains(err.Error(), c.errHas)):
			t.Errorf("%s: Verify = %v, want %s mentioning %q", c.name, err, c.reason, c.errHas)
		}
		if err != nil && strings.Contains(err.Error(), c.token) {
			t.Errorf("%s: error %q repeats the token", c.name, err)
		}
	}
}

func noneToken(t testing.TB, c claims) string {
	return signWith(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, c)
}

func signWith(t testing.TB, m jwt.SigningMethod, k any, c claims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(m, c).SignedString(k)
	if err != nil {
		t.Fatalf("sign %s: %v", m.Alg(), err)
	}
	return s
}

// HS/RS confusion: a token HMAC-signed with the bytes of the hub's public key must not verify, whether or not the
// hub also has an HMAC secret.
func TestVerifyPublicKeys(t *testing.T) {
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	edPub, edKey, _ := ed25519.GenerateKey(rand.Reader)
	g := Grant{Subscribe: []string{"a"}}
	for _, c := range []struct {
		m    jwt.SigningMethod
		priv any
		pub  crypto.PublicKey
	}{{jwt.SigningMethodRS256, rsaKey, &rsaKey.PublicKey}, {jwt.SigningMethodES256, ecKey, &ecKey.PublicKey}, {jwt.SigningMethodEdDSA, edKey, edPub}} {
		path := writePEM(t, c.pub)
		for _, secret := range [][]byte{nil, testSecret} {
			v, err := NewVerifier(Config{PublicKeyFile: path, HMACSecret: secret})
			if err != nil {
				t.Fatalf("NewVerifier(%s): %v", c.m.Alg(), err)
			}
			if _, err := v.Verify(signWith(t, c.m, c.priv, validClaims(g))); err != nil {
				t.Errorf("%s: Verify(valid) = %v", c.m.Alg(), err)
			}
			pemBytes, _ := os.ReadFile(path)
			if _, err := v.Verify(signHS(t, pemBytes, validClaims(g))); err == nil {
				t.Errorf("%s (secret %v): Verify(HS256 signed with the public key) = nil, want refused", c.m.Alg(), secret != nil)
			}
			if _, err := v.Verify(noneToken(t, validClaims(g))); err == nil {
				t.Errorf("%s: Verify(alg none) = nil, want refused", c.m.Alg())
			}
		}
	}
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	v, _ := NewVerifier(Config{PublicKeyFile: writePEM(t, &rsaKey.PublicKey)})
	if _, err := v.Verify(signWith(t, jwt.SigningMethodRS256, other, validClaims(g))); err == nil {
		t.Errorf("Verify(RS256 from another key) = nil, want refused")
	}
}

func TestVerifyJWKS(t *testing.T) {
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	edPub, edKey, _ := ed25519.GenerateKey(rand.Reader)
	b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	keys := []map[string]string{
		{"kty": "RSA", "kid": "r1", "alg": "RS256", "n": b64(rsaKey.N.Bytes()), "e": b64(big.NewInt(int64(rsaKey.E)).Bytes())},
		{"kty": "EC", "kid": "e1", "crv": "P-256", "x": b64(ecKey.X.FillBytes(make([]byte, 32))), "y": b64(ecKey.Y.FillBytes(make([]byte, 32)))},
		{"kty": "OKP", "kid": "d1", "crv": "Ed25519", "x": b64(edPub)},
		{"kty": "RSA", "use": "enc", "n": "AQAB", "e": "AQAB"},
	}
	doc, _ := json.Marshal(map[string]any{"keys": keys})
	path := filepath.Join(t.TempDir(), "jwks.json")
	_ = os.WriteFile(path, doc, 0o600)
	v, err := NewVerifier(Config{JWKSFile: path, Issuer: "https://idp", Audience: "hub"})
	if err != nil {
		t.Fatalf("NewVerifier(jwks): %v", err)
	}
	c := validClaims(Grant{Subscribe: []string{"a"}})
	c.Issuer, c.Audience = "https://idp", jwt.ClaimStrings{"hub", "other"}
	withKid := func(m jwt.SigningMethod, k any, kid string, c claims) string {
		tok := jwt.NewWithClaims(m, c)
		tok.Header["kid"] = kid
		s, _ := tok.SignedString(k)
		return s
	}
	for name, tok := range map[string]string{
		"RS256 r1": withKid(jwt.SigningMethodRS256, rsaKey, "r1", c), "ES256 e1": withKid(jwt.SigningMethodES256, ecKey, "e1", c),
		"EdDSA d1": withKid(jwt.SigningMethodEdDSA, edKey, "d1", c), "EdDSA no kid": signWith(t, jwt.SigningMethodEdDSA, edKey, c),
	} {
		if _, err := v.Verify(tok); err != nil {
			t.Errorf("%s: Verify = %v, want ok", name, err)
		}
	}
	wrongIss, wrongAud := c, c
	wrongIss.Issuer = "https://evil"
	wrongAud.Audience = jwt.ClaimStrings{"other"}
	for name, tok := range map[string]string{
		"unknown kid":        withKid(jwt.SigningMethodRS256, rsaKey, "r2", c),
		"kid of another key": withKid(jwt.SigningMethodRS256, rsaKey, "e1", c),
		"wrong issuer":       withKid(jwt.SigningMethodRS256, rsaKey, "r1", wrongIss),
		"wrong audience":     withKid(jwt.SigningMethodRS256, rsaKey, "r1", wrongAud),
	} {
		if _, err := v.Verify(tok); err == nil {
			t.Errorf("%s: Verify = nil, want refused", name)
		}
	}
}

func TestNewVerifierRefusesWeakOrBrokenKeys(t *testing.T) {
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	_, edPriv, _ := ed25519.GenerateKey(rand.Reader)
	der, err := x509.MarshalPKCS8PrivateKey(edPriv)
	if err != nil {
		t.Fatal(err)
	}
	priv := filepath.Join(t.TempDir(), "priv.pem") // a well-formed private key: refused for being one
	_ = os.WriteFile(priv, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
	bad := filepath.Join(t.TempDir(), "bad.json")
	_ = os.WriteFile(bad, []byte(`{"keys":[{"kty":"EC","crv":"P-256","x":"AQ","y":"AQ"}]}`), 0o600)
	for name, cfg := range map[string]Config{
		"none":          {},
		"short secret":  {HMACSecret: []byte("short")},
		"1024-bit RSA":  {PublicKeyFile: writePEM(t, &small.PublicKey)},
		"private key":   {PublicKeyFile: priv},
		"missing file":  {PublicKeyFile: filepath.Join(t.TempDir(), "nope.pem")},
		"off-curve JWK": {JWKSFile: bad},
	} {
		if _, err := NewVerifier(cfg); err == nil {
			t.Errorf("NewVerifier(%s) = nil error, want refused", name)
		}
	}
	if _, err := NewVerifier(Config{PublicKeyFile: priv}); err == nil || !strings.Contains(err.Error(), "is not a public key") {
		t.Errorf("NewVerifier(a private key) = %v, want it refused as not a public key", err)
	}
}

func TestSignRoundTrip(t *testing.T) {
	now := time.Now()
	g := Grant{Subscribe: []string{"project.*"}, Publish: []string{"project.42"}}
	tok, err := Sign(testSecret, g, Claims{Subject: "ops", Issuer: "hub", Audience: "hub", TTL: time.Hour}, now)
	if err != nil {
		t.Fatalf("Sign: %v", err)
	}
	v, _ := NewVerifier(Config{HMACSecret: testSecret, Issuer: "hub", Audience: "hub"})
	id, err := v.Verify(tok)
	if err != nil || id.Subject != "ops" || !id.Grant.CanSubscribe("project.7") || id.Grant.CanPublish("project.7") {
		t.Fatalf("Verify(Sign(...)) = %+v, %v", id, err)
	}
	if d := id.Expires.Sub(now); d < 59*time.Minute || d > time.Hour {
		t.Errorf("Expires - now = %v, want 1h", d)
	}
	for name, fn := range map[string]func() (string, error){
		"short secret": func() (string, error) { return Sign([]byte("x"), g, Claims{TTL: time.Hour}, now) },
		"no ttl":       func() (string, error) { return Sign(testSecret, g, Claims{}, now) },
		"empty grant":  func() (string, error) { return Sign(testSecret, Grant{}, Claims{TTL: time.Hour}, now) },
		"bad pattern": func() (string, error) {
			return Sign(testSecret, Grant{Publish: []string{"a b"}}, Claims{TTL: time.Hour}, now)
		},
	} {
		if _, err := fn(); err == nil {
			t.Errorf("Sign(%s) = nil error, want refused", name)
		}
	}
}

// FuzzVerify: no input makes Verify panic, and it accepts only a token signed with the secret (HS256 over its first
// two parts, checked here without the jwt library) that has not expired.
func FuzzVerify(f *testing.F) {
	v := testVerifier(f)
	f.Add(signHS(f, testSecret, validClaims(Grant{Subscribe: []string{"a"}})))
	f.Add(noneToken(f, validClaims(Grant{})))
	f.Add("eyJhbGciOiJub25lIn0.e30.")
	f.Fuzz(func(t *testing.T, raw string) {
		id, err := v.Verify(raw)
		var ae *Error
		if err != nil && !errors.As(err, &ae) {
			t.Fatalf("Verify(%q) = %v, want an *Error", raw, err)
		}
		if err != nil {
			return
		}
		if id == nil {
			t.Fatalf("Verify(%q) = nil, nil", raw)
		}
		if !signedWithSecret(raw) {
			t.Fatalf("Verify(%q) accepted a token that is not HS256-signed with the secret", raw)
		}
		if !time.Now().Before(id.Expires) {
			t.Fatalf("Verify(%q) accepted a token that expired at %v", raw, id.Expires)
		}
	})
}

// signedWithSecret reports whether raw's third part is the HS256 MAC of its first two under testSecret, and its
// header names HS256.
func signedWithSecret(raw string) bool {
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return false
	}
	head, err := base64.RawURLEncoding.DecodeString(parts[0])
	var h struct{ Alg string }
	if err != nil || json.Unmarshal(head, &h) != nil || h.Alg != "HS256" {
		return false
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, testSecret)
	mac.Write([]byte(parts[0] + "." + parts[1]))
	return hmac.Equal(sig, mac.Sum(nil))
}

// Expiry is exact (auth/doc.go): a token is refused at its exp, to the nanosecond, and accepted just before.
func TestVerifyRefusesATokenAtExactlyExp(t *testing.T) {
	exp := time.Now().Add(time.Hour).Truncate(time.Second) // a NumericDate holds whole seconds
	c := validClaims(Grant{Subscribe: []string{"a"}})
	c.ExpiresAt = jwt.NewNumericDate(exp)
	tok := signHS(t, testSecret, c)
	for _, at := range []struct {
		now  time.Time
		want Reason // "" for accepted
	}{{exp.Add(-time.Nanosecond), ""}, {exp, ReasonExpired}, {exp.Add(time.Nanosecond), ReasonExpired}} {
		v, err := NewVerifier(Config{HMACSecret: testSecret, Now: func() time.Time { return at.now }})
		if err != nil {
			t.Fatal(err)
		}
		_, err = v.Verify(tok)
		var ae *Error
		switch {
		case at.want == "" && err != nil:
			t.Errorf("Verify at exp%+v = %v, want accepted", at.now.Sub(exp), err)
		case at.want != "" && (!errors.As(err, &ae) || ae.Reason != at.want):
			t.Errorf("Verify at exp%+v = %v, want refused as %s", at.now.Sub(exp), err, at.want)
		}
	}
}
