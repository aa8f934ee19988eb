package hubtest

import (
	"cmp"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/syncverse/hub/internal/rig"
)

// NeedTool skips the test when a program is missing, and fails it when CI is set: CI installs it.
func NeedTool(t testing.TB, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			pkg := map[string]string{"redis-cli": "redis-tools", "go": "golang"}[n]
			rig.Missing(t, n, "this test runs it", "apt-get install -y "+cmp.Or(pkg, n))
		}
	}
}

// FreeBusPort returns a loopback port that was free a moment ago, below 55535 so that port+10000 (a cluster node's
// bus port) exists too, and with that one free as well.
func FreeBusPort(t testing.TB) int {
	t.Helper()
	a, err := rig.FreeBusAddr()
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(a[len("127.0.0.1:"):])
	return p
}

// BuildHub builds the hub binary (the module's root package, from any folder of the module) into a directory of
// the test's, which it returns for PATH: the docs and the examples call it hub. With -short it skips.
func BuildHub(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the hub")
	}
	dir := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "hub"), "github.com/syncverse/hub").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return dir
}
