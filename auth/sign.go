package auth

import (
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Claims are what a signed token says beyond its grant.
type Claims struct {
	Subject  string
	Issuer   string // should match auth.issuer when the hub checks it
	Audience string // should match auth.audience when the hub checks it
	TTL      time.Duration
}

// Sign returns an HS256 token for g, valid from now for c.TTL. It refuses a grant the hub would refuse, so an
// operator learns about a typo when minting the token, not when a console fails to connect.
func Sign(secret []byte, g Grant, c Claims, now time.Time) (string, error) {
	if len(secret) < MinSecretBytes {
		return "", fmt.Errorf("hmac secret: %d bytes, at least %d needed", len(secret), MinSecretBytes)
	}
	if c.TTL <= 0 {
		return "", errors.New("ttl must be positive")
	}
	if len(g.Subscribe) == 0 && len(g.Publish) == 0 {
		return "", errors.New("the token would grant nothing: give at least one subscribe or publish pattern")
	}
	if err := g.Validate(); err != nil {
		return "", err
	}
	rc := jwt.RegisteredClaims{
		Subject:   c.Subject,
		Issuer:    c.Issuer,
		IssuedAt:  jwt.NewNumericDate(now),
		NotBefore: jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(c.TTL)),
	}
	if c.Audience != "" {
		rc.Audience = jwt.ClaimStrings{c.Audience}
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims{RegisteredClaims: rc, Hub: g}).SignedString(secret)
	if err != nil {
		return "", fmt.Errorf("sign token: %w", err)
	}
	return tok, nil
}
