package hubtest

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/syncverse/hub/internal/app"
	"github.com/syncverse/hub/internal/cli"
	"github.com/syncverse/hub/internal/rig"
)

// Run is app.Run with its environment spelled out: what the tests call the program with.
func Run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer,
	listening func(url string)) error {
	return app.Run(ctx, app.Env{Args: args, Getenv: getenv, Stdin: stdin, Stdout: stdout, Stderr: stderr, Listening: listening})
}

// CLI runs the program as a shell would, with env as its whole environment, and returns the exit status and what
// it wrote, main's last words on stderr included.
func CLI(t testing.TB, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	err := Run(context.Background(), args, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errb, nil)
	code = cli.ExitCode(err, "hub", &errb)
	return code, out.String(), errb.String()
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
	rig.MainNoLeaks(m)
}
