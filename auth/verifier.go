package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
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

	// JWKSURL is an identity provider's key set, fetched by Run (https, or http to a loopback address).
	JWKSURL     string
	JWKSRefresh time.Duration // default DefaultJWKSRefresh; a shorter Cache-Control max-age wins
	JWKSRefetch time.Duration // least time between fetches for an unknown kid; default DefaultJWKSRefetch
	HTTPClient  *http.Client  // fetches JWKSURL; default one with a 10 s timeout
	OnRefresh   func(outcome string)
	// OnProblem is told, for the log, why a fetch failed and why each key of a fetched set was left out. Neither
	// reaches a client: before the first good fetch, a refused token is answered in general words.
	OnProblem func(err error)

	// RolesClaim is a dotted path to a claim listing role names; Roles gives each name its patterns, added to the
	// token's own "hub" grant.
	RolesClaim string
	Roles      map[string]Grant
}

// Verifier checks tokens. It is safe for concurrent use; only the key set fetched from JWKSURL changes, as a whole.
type Verifier struct {
	keys   []key       // the configured keys, fixed at start
	remote *remoteKeys // the IdP's, when JWKSURL is set
	roles  roleMap
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
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	roles, err := newRoleMap(cfg.RolesClaim, cfg.Roles)
	errs = append(errs, err)
	var remote *remoteKeys
	if cfg.JWKSURL != "" {
		var err error
		remote, err = newRemoteKeys(cfg)
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(keys) == 0 && remote == nil {
		return nil, errors.New("auth: no key configured (auth.hmac_secret, auth.public_key_file, auth.jwks_file or auth.jwks_url)")
	}
	if cfg.ClockSkew <= 0 {
		cfg.ClockSkew = DefaultClockSkew
	}
	methods := algorithms(keys)
	if remote != nil {
		methods = append(methods, remoteAlgs...)
	}
	opts := []jwt.ParserOption{
		jwt.WithValidMethods(methods), jwt.WithLeeway(cfg.ClockSkew), jwt.WithTimeFunc(cfg.Now),
		jwt.WithIssuedAt(), jwt.WithExpirationRequired(),
		jwt.WithStrictDecoding(), // one spelling per token: no unused bits in a segment's last character
	}
	if cfg.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(cfg.Issuer))
	}
	if cfg.Audience != "" {
		opts = append(opts, jwt.WithAudience(cfg.Audience))
	}
	return &Verifier{keys: keys, remote: remote, roles: roles, parser: jwt.NewParser(opts...), now: cfg.Now}, nil
}

// remoteAlgs are the algorithms an IdP's keys may sign with. Each fetched key still verifies only the one its type
// and curve fix, so a set that changes cannot open the door to algorithm confusion.
var remoteAlgs = []string{"RS256", "ES256", "ES384", "ES512", "EdDSA"}

// Algorithms lists the signing algorithms the verifier accepts.
func (v *Verifier) Algorithms() []string {
	if v.remote == nil {
		return algorithms(v.keys)
	}
	return append(algorithms(v.keys), remoteAlgs...)
}

// Run keeps the key set of JWKSURL fresh until ctx ends: fetched at once, then every JWKSRefresh (sooner when the
// IdP's Cache-Control max-age says so), and every few seconds while the URL fails. Without JWKSURL it returns at
// once. It is the one goroutine a Verifier needs; whoever starts the hub owns it.
func (v *Verifier) Run(ctx context.Context) {
	if v.remote != nil {
		v.remote.run(ctx)
	}
}

// UnusableKeys is how many signing keys of JWKSURL's set in force were left out as unusable (OnProblem says why).
func (v *Verifier) UnusableKeys() int {
	if v.remote == nil {
		return 0
	}
	return v.remote.unusable()
}

// KeysFetched is when the key set of JWKSURL in force was fetched: zero before the first good fetch, or without
// JWKSURL.
func (v *Verifier) KeysFetched() time.Time {
	if v.remote == nil {
		return time.Time{}
	}
	return v.remote.fetched()
}

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
	if err := checkClaimKeys(raw); err != nil {
		return nil, err
	}
	var c claims
	if _, err := v.parser.ParseWithClaims(raw, &c, v.keyFor); err != nil {
		e := classify(err)
		if errors.Is(err, jwt.ErrTokenInvalidClaims) { // checked only after the signature: the claims are the issuer's
			e.Subject = c.Subject
		}
		return nil, e
	}
	// jwt's leeway would also stretch exp; the hub holds exp exact so a stream never outlives its token.
	exp := c.ExpiresAt.Time
	if !v.now().Before(exp) {
		e := refuse(ReasonExpired, "token expired at "+exp.UTC().Format(time.RFC3339))
		e.Subject = c.Subject
		return nil, e
	}
	if err := c.Hub.Validate(); err != nil {
		e := refuse(ReasonBadToken, "invalid token grant: "+err.Error())
		e.Subject = c.Subject
		return nil, e
	}
	grant, err := v.roles.grant(raw, c.Hub)
	if err != nil {
		return nil, err
	}
	// The key digests the signed part only: an ECDSA signature has a twin that verifies too, and the publish-rate
	// limiter must see one client in both.
	sum := sha256.Sum256([]byte(raw[:strings.LastIndexByte(raw, '.')]))
	return &Identity{Subject: c.Subject, Grant: grant, Expires: exp, Key: hex.EncodeToString(sum[:12])}, nil
}

// keyFor returns the keys that may verify t: those bound to t's algorithm and, when t names a kid, to that kid.
func (v *Verifier) keyFor(t *jwt.Token) (any, error) {
	alg := t.Method.Alg()
	kid, _ := t.Header["kid"].(string)
	set := matching(v.keys, alg, kid)
	if len(set) == 0 && v.remote != nil {
		if set = matching(v.remote.keys(), alg, kid); len(set) == 0 {
			v.remote.refetchForKid() // the IdP may have rotated its keys since the last fetch
			set = matching(v.remote.keys(), alg, kid)
		}
		if v.remote.keys() == nil {
			return nil, v.remote.noKeys()
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

func matching(keys []key, alg, kid string) []jwt.VerificationKey {
	var set []jwt.VerificationKey
	for _, k := range keys {
		if k.alg == alg && (kid == "" || k.kid == "" || k.kid == kid) {
			set = append(set, k.key)
		}
	}
	return set
}

// classify turns a jwt error into the refusal the client sees.
func classify(err error) *Error {
	var nk *noKeysError
	switch {
	case errors.As(err, &nk):
		return refuse(ReasonNoKeys, nk.Error())
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
