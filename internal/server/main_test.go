package server

import (
	"testing"

	"github.com/syncverse/hub/internal/rig"
)

// TestMain checks that no test leaves a goroutine behind: the edge's streams end with the hub.
func TestMain(m *testing.M) { rig.MainNoLeaks(m) }
