package deploy_test

import (
	"testing"

	"github.com/syncverse/hub/e2e/hubtest"
)

// TestMain runs the tests from the module root and checks that none leaves a goroutine behind (hubtest.Main).
func TestMain(m *testing.M) { hubtest.Main(m) }
