// Package cli holds what every command of the hub's binaries shares: the process environment a command is given
// (Env), the signature of a command (Func), the one error for a command line that could not be parsed (ErrUsage),
// and the exit status for what a command returned (ExitCode).
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"
)

// ErrUsage marks a command line that could not be parsed; what was wrong, and the command's usage, were printed
// already. It is the one usage error of every command: ExitCode maps it to 2.
var ErrUsage = errors.New("usage")

// Env is what a command takes from the process: tests run commands with their own arguments, variables and streams.
type Env struct {
	Args           []string            // the arguments after the program's name
	Getenv         func(string) string // os.Getenv, or a test's variables; see Getenv for the HUB_* list
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Listening, when set, learns the URL `hub serve` serves on as soon as it listens (tests run it on 127.0.0.1:0).
	Listening func(url string)
}

// Func is one command: fs is its flag set, whose Usage prints the command's help; args are the arguments after the
// command's name.
type Func func(ctx context.Context, env Env, fs *flag.FlagSet, args []string) error

// IsTTY is true when w is a terminal: progress is drawn in place there, and nowhere else.
func IsTTY(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

// ExitCode is the process status for what a command returned: 0 for success and requested help, 2 for a command line
// that could not be parsed (the command has said why), 1 for anything else, which it prints on stderr after prog.
func ExitCode(err error, prog string, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, ErrUsage):
		return 2
	default:
		for line := range strings.SplitSeq(err.Error(), "\n") { // every problem on a line of its own
			fmt.Fprintln(stderr, prog+":", line)
		}
		return 1
	}
}

// The variables every client command of the hub reads (hub watch, topics, history, publish): where the hub is, and
// the bearer token to show it when neither --token-file nor --token-env is given. They are not configuration, but
// `hub serve` knows them and does not refuse them.
const (
	URLVar   = "HUB_URL"
	TokenVar = "HUB_TOKEN"
)

// EnvListKey is the name Getenv answers with the names of the HUB_* variables set, one a line (the configuration
// reads the variables it does not know to refuse them).
const EnvListKey = "HUB_*"

// Getenv is os.Getenv that also answers EnvListKey with the names of the HUB_* variables set.
func Getenv(key string) string {
	if key != EnvListKey {
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

// List is a repeatable flag (flag.Var): each use adds its comma-separated items, trimmed, leaving out empty ones.
type List []string

func (l *List) String() string { return strings.Join(*l, ",") }

func (l *List) Set(v string) error {
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}
