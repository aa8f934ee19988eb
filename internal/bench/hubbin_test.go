package bench

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/syncverse/hub/internal/testutil"
)

// hubBinary builds the hub (without -race, as it is deployed) into the test's directory, after skipping the test
// when one of tools is not installed; the scenario tests run the bench against it.
func hubBinary(t testing.TB, tools ...string) string {
	t.Helper()
	for _, tool := range tools {
		testutil.Require(t, tool, "the bench scenario does not run", "apt-get install -y redis-server (it brings redis-cli)")
	}
	bin := filepath.Join(t.TempDir(), "hub")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build the hub: %v\n%s", err, out)
	}
	return bin
}

// benchBinary builds cmd/hub-bench into the test's directory: the fleet scenario's load generators run it.
func benchBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "hub-bench")
	build := exec.Command("go", "build", "-o", bin, "./cmd/hub-bench")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build cmd/hub-bench: %v\n%s", err, out)
	}
	return bin
}
