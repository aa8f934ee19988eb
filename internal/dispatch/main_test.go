package dispatch

import (
	"context"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// childEnv makes the test binary play a dispatch-test child instead of running tests: --crash and --pause
// re-execute os.Executable(), which is this binary during tests.
const childEnv = "DISPATCH_CHILD=1"

func TestMain(m *testing.M) {
	if os.Getenv("DISPATCH_CHILD") == "1" {
		// os.Args is [binary, flags...], as for the dispatch-test binary.
		err := command(context.Background(), testFlags(os.Stderr), os.Args[1:], os.Stdout, os.Stderr, "", false)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

func testLauncher(t *testing.T) launcher {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("os.Executable: %v", err)
	}
	return launcher{exe: exe, env: []string{childEnv}}
}
