package app

import (
	"os/exec"
	"strings"
	"testing"
)

// TestHubBinaryLinksNoRig holds the product to what it deploys: the hub binary (the module root) links neither the
// load generator, the fault rigs nor a test helper; those are cmd/hub-bench, cmd/dispatch-test and the tests'.
func TestHubBinaryLinksNoRig(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/syncverse/hub").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 || !containsPkg(deps, "github.com/syncverse/hub/internal/app") {
		t.Fatalf("go list -deps of the hub lists %d packages without internal/app: %q", len(deps), out)
	}
	for _, tool := range []string{"internal/bench", "internal/chaos", "internal/dispatch", "internal/rig",
		"internal/tokentest", "auth/authtest", "hub/hubtest"} {
		if containsPkg(deps, "github.com/syncverse/hub/"+tool) {
			t.Errorf("the hub binary links %s", tool)
		}
	}
}

func containsPkg(deps []string, pkg string) bool {
	for _, d := range deps {
		if d == pkg {
			return true
		}
	}
	return false
}
