// Command hub is the SyncVerse progress hub: agents publish workflow progress through Redis, operators watch it
// live in a browser over Server-Sent Events. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/internal/config"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// go-redis has one logger per process; its lines join the hub's as JSON objects.
	redis.SetLogger(redisLogger{newLogger(config.LogConfig{Level: "info"}, os.Stderr).With().Str("component", "go-redis").Logger()})
	err := run(ctx, os.Args[1:], getenv, os.Stdin, os.Stdout, os.Stderr, nil)
	stop()
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.Is(err, errUsage):
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "hub:", err)
		os.Exit(1)
	}
}

// getenv is os.Getenv that also answers config.EnvListKey with the names of the HUB_* variables set.
func getenv(key string) string {
	if key != config.EnvListKey {
		return os.Getenv(key)
	}
	var names []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "HUB_") {
			names = append(names, name)
		}
	}
	return strings.Join(names, "\n")
}

// errUsage marks a command line that could not be parsed; the usage was printed already.
var errUsage = config.ErrUsage

// run is the whole program, minus the process: tests call it with their own arguments, environment and streams.
// listening, when set, learns the URL `hub serve` serves on as soon as it listens (tests run it on 127.0.0.1:0).
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer,
	listening func(url string)) error {
	name, rest := "serve", args
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		name, rest = args[0], args[1:]
	}
	switch name {
	case "serve":
		if listening == nil {
			listening = func(string) {}
		}
		return serve(ctx, rest, getenv, stdout, stderr, listening)
	case "publish":
		return publishCommand(ctx, rest, getenv, stdin, stdout, stderr)
	case "demo":
		return demoCommand(ctx, rest, getenv, stderr)
	case "healthcheck":
		return healthcheckCommand(ctx, rest, getenv, stdout, stderr)
	case "version":
		return versionCommand(stdout)
	case "token":
		return tokenCommand(ctx, rest, getenv, stdout, stderr)
	case "dispatch-test":
		return dispatchCommand(ctx, rest, getenv, stdout, stderr)
	case "bench":
		return benchCommand(ctx, rest, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprintf(stderr, "hub: unknown command %q\n\n%s", name, usage)
		return errUsage
	}
}

const usage = `hub: the SyncVerse progress hub

Usage:
  hub [serve] [--config FILE] [--demo] [--listen ADDR]   run the hub (the default command)
  hub publish --topic T [--type progress] [--data JSON]  publish one event through Redis (data from stdin if no --data)
  hub demo [--config FILE] [--redis-url URL]             run the --demo agents against redis.url, without serving
  hub dispatch-test [flags]                              verify the lease: one workflow per entity (see -h)
  hub healthcheck [--url URL]                            exit 0 when the hub answers /healthz
  hub bench [--scenario NAME]                            load the hub and measure it (scenarios: -h; BENCHMARKS.md)
  hub version                                            print the build's version
  hub token --subscribe P... [--publish P...] [--ttl 1h] print a token signed with auth.hmac_secret
  hub help                                               this text

Configuration: defaults < config.yaml (--config) < HUB_* variables < flags. See config.yaml.
Run "hub COMMAND -h" for a command's flags.
`
