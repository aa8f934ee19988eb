package watch

import (
	"testing"

	"github.com/syncverse/hub/internal/rig"
)

// TestMain fails the package when a test leaves a goroutine behind: Follow must return only after its reader has.
func TestMain(m *testing.M) { rig.MainNoLeaks(m) }
