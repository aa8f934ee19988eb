// Package authtest gives tests a shared HS256 secret and tokens signed with it, so the root's run-level tests and
// the server's handler-level tests sign the same way. It is imported by tests only.
package authtest

import (
	"testing"
	"time"

	"github.com/syncverse/hub/auth"
)

// Secret is the HS256 key of the tests' hubs (auth.hmac_secret, HUB_AUTH_HMAC_SECRET).
const Secret = "security-test-secret-0123456789abcdef"

// Admin may read and publish every topic: for the checks that must see past the rules under test.
var Admin = auth.Grant{Subscribe: []string{"*"}, Publish: []string{"*"}}

// Token signs a token for g with Secret, valid for ttl from now.
func Token(t testing.TB, g auth.Grant, ttl time.Duration) string {
	t.Helper()
	tok, err := auth.Sign([]byte(Secret), g, auth.Claims{Subject: "test", TTL: ttl}, time.Now())
	if err != nil {
		t.Fatalf("auth.Sign: %v", err)
	}
	return tok
}
