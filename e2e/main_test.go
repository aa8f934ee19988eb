package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/syncverse/hub/internal/testutil"
)

// TestMain runs the tests from the module root, where they find the docs, deploy files and examples they check and
// build the hub binary with `go build .`; and it checks that no test leaves a goroutine behind: app.Run must return
// only when everything it started is gone.
func TestMain(m *testing.M) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		panic("e2e: go env GOMOD: " + err.Error())
	}
	if err := os.Chdir(filepath.Dir(strings.TrimSpace(string(out)))); err != nil {
		panic("e2e: " + err.Error())
	}
	testutil.MainNoLeaks(m)
}
