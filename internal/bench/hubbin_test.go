package bench

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// hubBinary builds the hub (without -race, as it is deployed) into the test's directory, after skipping the test
// when one of tools is not installed; the scenario tests run the bench against it.
func hubBinary(t testing.TB, tools ...string) string {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
	bin := filepath.Join(t.TempDir(), "hub")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build the hub: %v\n%s", err, out)
	}
	return bin
}
