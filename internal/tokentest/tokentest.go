// Package tokentest signs the HS256 tokens of the tests that run a hub with auth.hmac_secret set (a package of its
// own: rig is imported by hub's tests, and auth imports hub).
package tokentest

import (
	"testing"
	"time"

	"github.com/syncverse/hub/auth"
)

// Secret is the HS256 secret of the tests that run a hub with auth.hmac_secret set.
const Secret = "security-test-secret-0123456789abcdef"

// Sign signs a token for grant g, valid for ttl from now, with Secret; the subject is "test".
func Sign(t testing.TB, g auth.Grant, ttl time.Duration) string {
	t.Helper()
	tok, err := auth.Sign([]byte(Secret), g, auth.Claims{Subject: "test", TTL: ttl}, time.Now())
	if err != nil {
		t.Fatalf("auth.Sign: %v", err)
	}
	return tok
}
