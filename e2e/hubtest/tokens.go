package hubtest

import (
	"testing"
	"time"

	"github.com/syncverse/hub/auth"
	"github.com/syncverse/hub/internal/tokentest"
)

// TokenExpiry reads the exp of a token signed with tokentest.Secret the way the hub does.
func TokenExpiry(t testing.TB, tok string) time.Time {
	t.Helper()
	v, err := auth.NewVerifier(auth.Config{HMACSecret: []byte(tokentest.Secret)})
	if err != nil {
		t.Fatal(err)
	}
	id, err := v.Verify(tok)
	if err != nil {
		t.Fatalf("Verify(own token): %v", err)
	}
	return id.Expires
}
