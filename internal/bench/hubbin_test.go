package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/syncverse/hub/internal/rig"
)

// hubBinary builds the hub (without -race, as it is deployed) into the test's directory, after skipping the test
// when one of tools is not installed; the scenario tests run the bench against it.
func hubBinary(t testing.TB, tools ...string) string {
	t.Helper()
	for _, tool := range tools {
		rig.Require(t, tool, "the bench scenario does not run", "apt-get install -y redis-server (it brings redis-cli)")
	}
	return goBuild(t, ".", "hub")
}

// scenarioHub skips the test under -short, saying why, and else returns hubBinary(t, "redis-server"): the opening
// of the tests that run a scenario on hub processes.
func scenarioHub(t *testing.T, why string) string {
	t.Helper()
	if testing.Short() {
		t.Skip(why)
	}
	return hubBinary(t, "redis-server")
}

// benchBinary builds cmd/hub-bench into the test's directory: the fleet scenario's load generators run it.
func benchBinary(t *testing.T) string {
	t.Helper()
	return goBuild(t, "./cmd/hub-bench", "hub-bench")
}

// goBuild builds the module's package pkg into the test's directory as name and returns its path.
func goBuild(t testing.TB, pkg, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	build := exec.Command("go", "build", "-o", bin, pkg)
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// runJSON runs hub bench with args (which ask for --json) for at most timeout and decodes its output into res. It
// stops the test when the output is not JSON, or when has, asked after decoding, says res lacks what the test reads;
// else it returns the output and the command's error.
func runJSON(t *testing.T, timeout time.Duration, args []string, res any, has func() bool) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var out, errb bytes.Buffer
	err := command(ctx, flag.NewFlagSet("hub bench", flag.ContinueOnError), args, &out, &errb, false)
	if jerr := json.Unmarshal(out.Bytes(), res); jerr != nil || !has() {
		t.Fatalf("hub bench %q = %v; output %q (%v), stderr %q", args, err, out.String(), jerr, errb.String())
	}
	return out.String(), err
}
