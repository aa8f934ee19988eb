package hubtest

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/syncverse/hub/internal/app"
	"github.com/syncverse/hub/internal/testutil"
)

// Run is app.Run with its environment spelled out: what the tests call the program with.
func Run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer,
	listening func(url string)) error {
	return app.Run(ctx, app.Env{Args: args, Getenv: getenv, Stdin: stdin, Stdout: stdout, Stderr: stderr, Listening: listening})
}

// Main is the TestMain of the end-to-end packages. It runs the tests from the module root, where they find the
// docs, deploy files and examples they check and build the hub binary with `go build .`; and it checks that no test
// leaves a goroutine behind: app.Run must return only when everything it started is gone.
func Main(m *testing.M) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		panic("hubtest: go env GOMOD: " + err.Error())
	}
	if err := os.Chdir(filepath.Dir(strings.TrimSpace(string(out)))); err != nil {
		panic("hubtest: " + err.Error())
	}
	testutil.MainNoLeaks(m)
}
