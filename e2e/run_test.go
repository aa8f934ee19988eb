package e2e

import (
	"context"
	"io"

	"github.com/syncverse/hub/internal/app"
	"github.com/syncverse/hub/internal/cli"
	"github.com/syncverse/hub/internal/eventschema"
)

// The tests drive the program through app.Run, as main does; these name its parts as the tests call them.

// run is app.Run with its environment spelled out.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer,
	listening func(url string)) error {
	return app.Run(ctx, app.Env{Args: args, Getenv: getenv, Stdin: stdin, Stdout: stdout, Stderr: stderr, Listening: listening})
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
