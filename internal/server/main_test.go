package server

import (
	"testing"

	"github.com/syncverse/hub/internal/testutil"
)

// TestMain checks that no test leaves a goroutine behind: the edge's streams end with the hub.
func TestMain(m *testing.M) { testutil.MainNoLeaks(m) }
