// Command hub is the SyncVerse progress hub: agents publish workflow progress through Redis, operators watch it
// live in a browser over Server-Sent Events. See README.md and docs/cli.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/mattn/go-isatty"
	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/internal/config"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// go-redis has one logger per process; its lines join the hub's as JSON objects.
	redis.SetLogger(redisLogger{newLogger(config.LogConfig{Level: "info"}, os.Stderr).With().Str("component", "go-redis").Logger()})
	err := run(ctx, os.Args[1:], getenv, os.Stdin, os.Stdout, os.Stderr, nil)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode is the process status for what run returned: 0 for success and requested help, 2 for a command line
// that could not be parsed (run has said why), 1 for anything else, which it prints.
func exitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	default:
		for line := range strings.SplitSeq(err.Error(), "\n") { // every problem on a line of its own
			fmt.Fprintln(stderr, "hub:", line)
		}
		return 1
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

// errUsage marks a command line that could not be parsed; what was wrong was printed already.
var errUsage = config.ErrUsage

// run is the whole program, minus the process: tests call it with their own arguments, environment and streams.
// listening, when set, learns the URL `hub serve` serves on as soon as it listens (tests run it on 127.0.0.1:0).
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer,
	listening func(url string)) error {
	if listening == nil {
		listening = func(string) {}
	}
	c := &cli{getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr, listening: listening}
	name, rest := "serve", args
	if len(args) > 0 {
		switch a := args[0]; {
		case isHelpFlag(a):
			name, rest = "help", args[1:]
		case a == "--version" || a == "-version":
			name, rest = "version", args[1:]
		case !strings.HasPrefix(a, "-"):
			name, rest = a, args[1:]
		}
	}
	cmd, rest, ok := lookup(name, rest)
	if !ok {
		return unknownCommand(stderr, "hub", name, rest)
	}
	return cmd.run(ctx, c, c.flags(cmd, rest), rest)
}

// cli is what a command is given besides its flags: the environment and the streams of the process.
type cli struct {
	getenv         func(string) string
	stdin          io.Reader
	stdout, stderr io.Writer
	listening      func(url string) // serve's; a no-op unless a test listens
}

// isTTY is true when w is a terminal: progress is drawn in place there, and nowhere else.
func (c *cli) isTTY(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

// command is one entry of the command table (commands.go): `hub help` lists its summary, and `hub help NAME` and
// `hub NAME -h` print its usage line, about, flags and example.
type command struct {
	name    string // one word, or two for a command with a subcommand ("config check")
	usage   string // the synopsis after "hub NAME"
	summary string // one line in the list of commands
	about   string // one or more sentences on what it does
	example string // one or more command lines
	// run parses args with fs, whose Usage prints this command's help, and runs the command.
	run func(ctx context.Context, c *cli, fs *flag.FlagSet, args []string) error
}

// lookup finds the command a name (and, for two-word commands, the first argument after it) names.
func lookup(name string, rest []string) (command, []string, bool) {
	for _, cmd := range commands() {
		first, second, two := strings.Cut(cmd.name, " ")
		switch {
		case !two && cmd.name == name:
			return cmd, rest, true
		case two && first == name && len(rest) > 0 && rest[0] == second:
			return cmd, rest[1:], true
		}
	}
	return command{}, rest, false
}

func isHelpFlag(a string) bool { return a == "-h" || a == "--help" || a == "-help" || a == "--h" }

// flags is the flag set a command parses its arguments with. Its Usage prints the command's help: on stdout when
// the help was asked for, on stderr after a wrong flag.
func (c *cli) flags(cmd command, args []string) *flag.FlagSet {
	fs := flag.NewFlagSet("hub "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	w := c.stderr
	for _, a := range args {
		if a == "--" {
			break
		}
		if isHelpFlag(a) {
			w = c.stdout
		}
	}
	fs.Usage = func() { printHelp(w, cmd, fs) }
	return fs
}

// printHelp is the one help format of every command.
func printHelp(w io.Writer, cmd command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: hub %s %s\n\n%s\n", cmd.name, cmd.usage, cmd.about)
	var lines []string
	fs.VisitAll(func(f *flag.Flag) {
		if f.Usage == "" { // hidden: the internal flags of child processes
			return
		}
		name, text := flag.UnquoteUsage(f)
		l := "  --" + f.Name
		if name != "" {
			l += " " + strings.ToUpper(name)
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "0s" && f.DefValue != "[]" {
			text += " (default " + f.DefValue + ")"
		}
		lines = append(lines, l+"\n      "+text)
	})
	if len(lines) > 0 {
		fmt.Fprintf(w, "\nFlags:\n%s\n", strings.Join(lines, "\n"))
	}
	fmt.Fprintf(w, "\nExample:\n%s\n", indent(cmd.example))
}

// unknownCommand says that name (with the word after it in rest, for a command with subcommands) names no command,
// and lists the commands.
func unknownCommand(w io.Writer, who, name string, rest []string) error {
	var subs []string
	for _, cmd := range commands() {
		if strings.HasPrefix(cmd.name, name+" ") {
			subs = append(subs, cmd.name)
		}
	}
	word := len(rest) > 0 && !strings.HasPrefix(rest[0], "-")
	switch {
	case len(subs) > 0 && !word:
		fmt.Fprintf(w, "%s: %q needs a subcommand: %s\n\n", who, name, strings.Join(subs, ", "))
	case len(subs) > 0:
		fmt.Fprintf(w, "%s: unknown command %q\n\n", who, name+" "+rest[0])
	default:
		fmt.Fprintf(w, "%s: unknown command %q\n\n", who, name)
	}
	printCommands(w)
	return errUsage
}

// printCommands is the list `hub help` prints.
func printCommands(w io.Writer) {
	fmt.Fprint(w, "hub: the SyncVerse progress hub\n\nUsage: hub COMMAND [flags]   (no command: serve)\n\nCommands:\n")
	for _, cmd := range commands() {
		fmt.Fprintf(w, "  %-15s %s\n", cmd.name, cmd.summary)
	}
	fmt.Fprint(w, "\nConfiguration: defaults < config.yaml (--config) < HUB_* variables < flags; hub config check shows it.\n"+
		"Run \"hub help COMMAND\" or \"hub COMMAND -h\" for a command's flags and an example.\n")
}

// helpCommand is `hub help [COMMAND]`: the list of commands, or one command's help on stdout.
func helpCommand(ctx context.Context, c *cli, fs *flag.FlagSet, args []string) error {
	if slices.ContainsFunc(args, isHelpFlag) {
		fs.Usage()
		return flag.ErrHelp
	}
	if len(args) == 0 {
		printCommands(c.stdout)
		return nil
	}
	cmd, rest, ok := lookup(args[0], args[1:])
	if !ok || len(rest) > 0 {
		return unknownCommand(c.stderr, "hub help", strings.Join(args, " "), nil)
	}
	help := []string{"-h"}
	err := cmd.run(ctx, c, c.flags(cmd, help), help) // every command parses its flags before it does anything
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n  ")
}
