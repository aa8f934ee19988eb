// Command hub is the SyncVerse progress hub: agents publish workflow progress through Redis, operators watch it
// live in a browser over Server-Sent Events. See README.md and docs/cli.md. The program is internal/app; this is
// the process around it.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/syncverse/hub/internal/app"
	"github.com/syncverse/hub/internal/cli"
)

// version and revision are stamped by the release build (-ldflags "-X main.version=v1.2.3 -X main.revision=<sha>").
var version, revision string

func main() {
	app.Stamp(version, revision)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	app.LogRedis(os.Stderr)
	err := app.Run(ctx, app.Env{Args: os.Args[1:], Getenv: cli.Getenv, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
	stop()
	os.Exit(cli.ExitCode(err, "hub", os.Stderr))
}
