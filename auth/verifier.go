package auth

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// MinSecretBytes is the shortest HS256 secret accepted: HMAC-SHA256 is only as strong as its key, and a short
// shared secret can be brute-forced from any one token.
const MinSecretBytes = 32

// DefaultClockSkew is how far in the future nbf and iat may lie.
const DefaultClockSkew = 10 * time.Second

// Config chooses the keys and the checks. At least one of HMACSecret, PublicKeyFile and JWKSFile is needed.
type Config struct {
	HMACSecret    []byte        // HS256
	PublicKeyFile string        // PEM: RS256 (RSA), ES256/ES384/ES512 (by curve) or EdDSA (Ed25519)
	JWKSFile      string        // a JWKS document; keys chosen by kid
	Issuer        string        // when set, iss must equal it
	Audience      string        // when set, aud must contain it
	ClockSkew     time.Duration // allowance for nbf and iat (default 10s); exp is exact
	Now           func() time.Time
}

// Verifier checks tokens. It is immutable and safe for concurrent use.
type Verifier struct {
	keys   []key
	parser *jwt.Parser
	now    func() time.Time
}

// Identity is who a verified request comes from and what it may do.
type Identity struct {
	Subject string
	Grant   Grant
	Expires time.Time // zero for anonymous access: no end
	// Key identifies the credentials for per-client limits: a digest of the token, or "" when anonymous.
	Key string
}

// claims is a token's payload as the hub reads it.
type claims struct {
	jwt.RegisteredClaims
	Hub Grant `json:"hub"`
}

// NewVerifier loads the configured keys.
func NewVerifier(cfg Config) (*Verifier, error) {
	var keys []key
	var errs []error
	if len(cfg.HMACSecret) > 0 {
		if len(cfg.HMACSecret) < MinSecretBytes {
			errs = append(errs, fmt.Errorf("auth.hmac_secret: %d bytes, at least %d needed", len(cfg.HMACSecret), MinSecretBytes))
		}
		keys = append(keys, key{alg: "HS256", key: cfg.HMACSecret})
	}
	if cfg.PublicKeyFile != "" {
		k, err := loadPEM(cfg.PublicKeyFile)
		errs = append(errs, err)
		keys = append(keys, k)
	}
	if cfg.JWKSFile != "" {
		ks, err := loadJWKS(cfg.JWKSFile)
		errs = append(errs, err)
		keys = append(keys, ks...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, errors.New("auth: no key configured (auth.hmac_secret, auth.public_key_file or auth.jwks_file)")
	}
	if cfg.ClockSkew <= 0 {
		cfg.ClockSkew = DefaultClockSkew
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	opts := []jwt.ParserOption{
		jwt.WithValidMethods(algorithms(keys)), jwt.WithLeeway(cfg.ClockSkew), jwt.WithTimeFunc(cfg.Now),
		jwt.WithIssuedAt(), jwt.WithExpirationRequired(),
	}
	if cfg.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(cfg.Issuer))
	}
	if cfg.Audience != "" {
		opts = append(opts, jwt.WithAudience(cfg.Audience))
	}
	return &Verifier{keys: keys, parser: jwt.NewParser(opts...), now: cfg.Now}, nil
}

// Algorithms lists the signing algorithms the verifier accepts.
func (v *Verifier) Algorithms() []string { return algorithms(v.keys) }

func algorithms(keys []key) []string {
	var algs []string
	for _, k := range keys {
		if !slices.Contains(algs, k.alg) {
			algs = append(algs, k.alg)
		}
	}
	return algs
}

// Verify checks raw's signature, algorithm, exp (exactly), nbf and iat (with the skew allowance), iss and aud, and
// its grant. Every failure is an *Error whose message does not echo the token.
func (v *Verifier) Verify(raw string) (*Identity, error) {
	var c claims
	if _, err := v.parser.ParseWithClaims(raw, &c, v.keyFor); err != nil {
		return nil, classify(err)
	}
	// jwt's leeway would also stretch exp; the hub holds exp exact so a stream never outlives its token.
	exp := c.ExpiresAt.Time
	if !v.now().Before(exp) {
		return nil, refuse(ReasonExpired, "token expired at "+exp.UTC().Format(time.RFC3339))
	}
	if err := c.Hub.Validate(); err != nil {
		return nil, refuse(ReasonBadToken, "invalid token grant: "+err.Error())
	}
	sum := sha256.Sum256([]byte(raw))
	return &Identity{Subject: c.Subject, Grant: c.Hub, Expires: exp, Key: hex.EncodeToString(sum[:12])}, nil
}

// keyFor returns the keys that may verify t: those bound to t's algorithm and, when t names a kid, to that kid.
func (v *Verifier) keyFor(t *jwt.Token) (any, error) {
	alg := t.Method.Alg()
	kid, _ := t.Header["kid"].(string)
	var set []jwt.VerificationKey
	for _, k := range v.keys {
		if k.alg == alg && (kid == "" || k.kid == "" || k.kid == kid) {
			set = append(set, k.key)
		}
	}
	switch len(set) {
	case 0:
		return nil, fmt.Errorf("no %s key with kid %q", alg, clip(kid))
	case 1:
		return set[0], nil
	}
	return jwt.VerificationKeySet{Keys: set}, nil
}

// classify turns a jwt error into the refusal the client sees.
func classify(err error) *Error {
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return refuse(ReasonExpired, "token expired")
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return refuse(ReasonBadToken, "token not valid yet (nbf is in the future)")
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return refuse(ReasonBadToken, "token issued in the future (iat)")
	case errors.Is(err, jwt.ErrTokenMalformed):
		return refuse(ReasonBadToken, "malformed token")
	}
	return refuse(ReasonBadToken, "invalid token: "+err.Error())
}
