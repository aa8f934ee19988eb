package watch

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/cli"
)

// Env is what the commands take from the process.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// DefaultURL is the hub --url means when it is not given and HUB_URL is not set: the hub's default listen
	// address.
	DefaultURL string
}

// terminal is the file descriptor behind Stdout when it is a terminal that can move its cursor.
func (e Env) terminal() (fd uintptr, ok bool) {
	f, isFile := e.Stdout.(interface{ Fd() uintptr })
	if !isFile || !isatty.IsTerminal(f.Fd()) || e.Getenv("TERM") == "dumb" {
		return 0, false
	}
	return f.Fd(), true
}

// color says whether a terminal gets colours: not with NO_COLOR set to anything (no-color.org).
func (e Env) color() bool {
	_, tty := e.terminal()
	return tty && e.Getenv("NO_COLOR") == ""
}

// parse parses args into fs and returns the problems every command checks, for the caller to add its own to. fs is
// named "hub NAME"; its Usage prints the command's help.
func parse(fs *flag.FlagSet, args []string, c *Conn) ([]string, error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, cli.ErrUsage
	}
	var problems []string
	if fs.NArg() > 0 {
		problems = append(problems, fmt.Sprintf("unexpected argument %q (flags only; run \"%s -h\" for help)", fs.Arg(0), fs.Name()))
	}
	return append(problems, c.Problems()...), nil
}

func usageError(fs *flag.FlagSet, problems []string) error {
	var bad []string
	for _, p := range problems {
		if p != "" {
			bad = append(bad, p)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	fmt.Fprintf(fs.Output(), "%s: %s\n", fs.Name(), strings.Join(bad, "; "))
	fs.Usage()
	return cli.ErrUsage
}

// checkTopics is the problem with topics, or "".
func checkTopics(topics []string) string {
	if len(topics) == 0 {
		return "--topic is required"
	}
	for _, t := range topics {
		if err := hub.ValidateTopic(t); err != nil {
			return "--topic: " + err.Error()
		}
	}
	return ""
}

// Watch is `hub watch`: it follows topics until ctx ends, as a table on a terminal, else one line per event. It
// defines its flags on fs, whose Usage prints the command's help.
func Watch(ctx context.Context, fs *flag.FlagSet, args []string, env Env) error {
	var c Conn
	var topics cli.List
	fs.Var(&topics, "topic", "`topic` to follow (required; repeatable)")
	history := fs.Int("history", 0, "show the last `N` events of each topic first (in the table: under it, as the latest events)")
	plain := fs.Bool("plain", false, "one line per event, even on a terminal")
	asJSON := fs.Bool("json", false, "each event as one JSON line {topic,id,type,data,time}")
	c.Flags(fs, env)
	bad, err := parse(fs, args, &c)
	if err != nil {
		return err
	}
	topics = uniq(topics)
	bad = append(bad, checkTopics(topics))
	if *history < 0 {
		bad = append(bad, "--history must not be negative")
	}
	if *plain && *asJSON {
		bad = append(bad, "--plain and --json: give one")
	}
	if err := usageError(fs, bad); err != nil {
		return err
	}
	client, err := c.Client(env.Getenv)
	if err != nil {
		return err
	}
	defer client.Close()
	f := &Follower{Client: client, Topics: topics, History: *history}
	fd, tty := env.terminal()
	var screen *Screen
	switch {
	case *asJSON:
		f.Sink = &JSON{W: env.Stdout, Notes: env.Stderr, Terminal: tty}
	case *plain || !tty:
		f.Sink = &Lines{W: env.Stdout, Notes: env.Stderr, Color: env.color()}
	default:
		screen = &Screen{W: env.Stdout, Color: env.color(), Topics: topics, Model: NewModel(),
			Size: func() (int, int) { return termSize(fd) }}
		// --history fills the latest events; the rows come from the snapshot, which replayed older events cannot undo.
		f.Sink, f.ResetToSnapshot = screen, true
		f.Presence = true // the header shows how many watch (presence frames; none when the hub has presence off)
	}
	err = f.Follow(ctx)
	if screen != nil {
		screen.Close(time.Now())
	}
	return err
}

func uniq(list []string) []string {
	seen := map[string]bool{}
	out := list[:0:0]
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
