package docs_test

import (
	"testing"

	"github.com/syncverse/hub/e2e/hubtest"
)

// TestMain runs the docs' tests from the module root, where the pages, specs and sources they check are, and checks
// that none leaves a goroutine behind (hubtest.Main).
func TestMain(m *testing.M) { hubtest.Main(m) }
