//go:build slow

package browser

import (
	"testing"

	"github.com/syncverse/hub/e2e/hubtest"
)

// TestMain runs the console tests from the module root and checks that none leaves a goroutine behind (hubtest.Main).
func TestMain(m *testing.M) { hubtest.Main(m) }
