// Package app is the hub binary: Run parses the command line and runs a command of the table (commands.go); serve
// builds the parts and shuts them down in order. main (the module root) is the process around it.
package app

// Run, the command table's entry type, and the one help format of every command. The command table is in commands.go.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/internal/cli"
	"github.com/syncverse/hub/internal/config"
)

// LogRedis sends go-redis's log lines to w as the hub's JSON lines, an outage's failed dials summed up (redisLog):
// go-redis has one logger per process, which main sets once before Run.
func LogRedis(w io.Writer) {
	l := newRedisLog(newLogger(config.LogConfig{Level: "info"}, w), redisSummaryEvery)
	theRedisLog.Lock()
	theRedisLog.l = l
	theRedisLog.Unlock()
	redis.SetLogger(l)
}

// Env is what Run takes from the process: the arguments after the program's name, the variables, the streams.
type Env = cli.Env

// Run is the whole program, minus the process: main calls it with os.Args[1:], cli.Getenv and the standard streams;
// tests with their own arguments, environment and streams. env.Listening, when set, learns the URL `hub serve`
// serves on as soon as it listens (tests run it on 127.0.0.1:0).
func Run(ctx context.Context, env Env) error {
	if env.Listening == nil {
		env.Listening = func(string) {}
	}
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	if env.Stdin == nil {
		env.Stdin = strings.NewReader("")
	}
	if env.Stdout == nil {
		env.Stdout = io.Discard
	}
	if env.Stderr == nil {
		env.Stderr = io.Discard
	}
	c, args, stderr := env, env.Args, env.Stderr
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
	if to, ok := moved[name]; ok {
		fmt.Fprintf(stderr, "hub: %s is a command of its own now: %s\n", name, to)
		return cli.ErrUsage
	}
	cmd, rest, ok := lookup(name, rest)
	if !ok {
		return unknownCommand(stderr, "hub", name, rest)
	}
	return cmd.run(ctx, c, flags(c, cmd, rest), rest)
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
	run cli.Func
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
func flags(c cli.Env, cmd command, args []string) *flag.FlagSet {
	fs := flag.NewFlagSet("hub "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	w := c.Stderr
	for _, a := range args {
		if a == "--" {
			break
		}
		if isHelpFlag(a) {
			w = c.Stdout
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
	return cli.ErrUsage
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
func helpCommand(ctx context.Context, c cli.Env, fs *flag.FlagSet, args []string) error {
	if slices.ContainsFunc(args, isHelpFlag) {
		fs.Usage()
		return flag.ErrHelp
	}
	if len(args) == 0 {
		printCommands(c.Stdout)
		return nil
	}
	cmd, rest, ok := lookup(args[0], args[1:])
	if !ok || len(rest) > 0 {
		return unknownCommand(c.Stderr, "hub help", strings.Join(args, " "), nil)
	}
	help := []string{"-h"}
	err := cmd.run(ctx, c, flags(c, cmd, help), help) // every command parses its flags before it does anything
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n  ")
}

// moved are the commands that left the hub binary for binaries of their own: the binary the hub deploys carries no
// load generator and no fault rig.
var moved = map[string]string{
	"bench":         "go run ./cmd/hub-bench (BENCHMARKS.md)",
	"dispatch-test": "go run ./cmd/dispatch-test",
}

// CommandNames lists the commands in the order `hub help` lists them, two-word ones ("config check") as two words.
func CommandNames() []string {
	var names []string
	for _, cmd := range commands() {
		names = append(names, cmd.name)
	}
	return names
}
