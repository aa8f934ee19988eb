package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Tool is a program of one command (hub-bench, dispatch-test): its name, the synopsis after the name, what it does,
// and the command.
type Tool struct {
	Name, Usage, About string
	Run                Func
}

// Main runs the tool as a process until SIGINT or SIGTERM and exits with ExitCode's status.
func (t Tool) Main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := t.Exec(ctx, Env{Args: os.Args[1:], Getenv: Getenv, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
	stop()
	os.Exit(ExitCode(err, t.Name, os.Stderr))
}

// Exec runs the tool with env's arguments; its flag set's Usage prints the help, on stdout when -h asked for it.
func (t Tool) Exec(ctx context.Context, env Env) error {
	fs := flag.NewFlagSet(t.Name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	w := env.Stderr
	for _, a := range env.Args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "--help" || a == "-help" {
			w = env.Stdout
		}
	}
	fs.Usage = func() { t.help(w, fs) }
	return t.Run(ctx, env, fs, env.Args)
}

func (t Tool) help(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: %s %s\n\n%s\n\nFlags:\n", t.Name, t.Usage, t.About)
	out := fs.Output()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(out)
}
