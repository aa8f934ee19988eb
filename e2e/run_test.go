package e2e

import (
	"context"
	"io"
	"strings"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/app"
	"github.com/syncverse/hub/internal/bench"
	"github.com/syncverse/hub/internal/cli"
	"github.com/syncverse/hub/internal/dispatch"
	"github.com/syncverse/hub/internal/eventschema"
)

// The tests drive the program through app.Run, as main does; these name its parts as the tests call them.

// runProgram runs the program args[0] names when it is one of the rigs' (hub-bench, dispatch-test), as their
// binaries do, and the hub's command args[0] otherwise.
func runProgram(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	tools := map[string]cli.Tool{bench.Tool.Name: bench.Tool, dispatch.Tool.Name: dispatch.Tool}
	if tool, ok := tools[args[0]]; ok {
		return tool.Exec(ctx, cli.Env{Args: args[1:], Getenv: getenv, Stdout: stdout, Stderr: stderr})
	}
	return hubtest.Run(ctx, args, getenv, strings.NewReader(""), stdout, stderr, nil)
}

// errUsage is the one usage error of every command.
var errUsage = cli.ErrUsage

// exitCode is the process status main exits with for what run returned.
func exitCode(err error, stderr io.Writer) int { return cli.ExitCode(err, "hub", stderr) }

// command is an entry of the command table, as far as the tests read it.
type command struct{ name string }

// commands is the command table's names, in the order `hub help` lists them.
func commands() []command {
	var cmds []command
	for _, name := range app.CommandNames() {
		cmds = append(cmds, command{name: name})
	}
	return cmds
}

// compileEventSchemas compiles the schemas the binary embeds from docs/schemas.
func compileEventSchemas() (*eventschema.Set, error) { return app.CompileEventSchemas() }
