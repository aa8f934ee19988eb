//go:build slow

package browser

import (
	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/tokentest"
)

const testSecret = tokentest.Secret

// The tests' names for the shared harness (package hubtest).
type testHub = hubtest.Hub

var (
	startHub = hubtest.Start
	data     = hubtest.EventData
	run      = hubtest.Run

	// signToken is the HS256 token of these tests (tokentest owns the secret and the signing).
	signToken   = tokentest.Sign
	tokenExpiry = hubtest.TokenExpiry
)
