package watch

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"strings"
	"testing"

	"github.com/syncverse/hub/internal/cli"
)

// A wrong command line is refused before anything is asked of the hub, every problem named at once, then the help.
func TestCommandLineProblems(t *testing.T) {
	type command func(context.Context, *flag.FlagSet, []string, Env) error
	tests := []struct {
		name string
		cmd  command
		args []string
		want []string
	}{
		{"watch", Watch, nil, []string{"--topic is required"}},
		{"watch", Watch, []string{"--topic", "a b"}, []string{"--topic: invalid topic"}},
		{"watch", Watch, []string{"--topic", "t", "--plain", "--json", "--history", "-1"},
			[]string{"--history must not be negative", "--plain and --json: give one"}},
		{"watch", Watch, []string{"--topic", "t", "--url", "localhost:8080", "extra"},
			[]string{`unexpected argument "extra"`, `--url "localhost:8080": want http://host:port`}},
		{"topics", Topics, []string{"--token-file", "f", "--token-env", "V"}, []string{"--token-file and --token-env: give one"}},
		{"history", History, []string{"--limit", "0", "--after", "x"},
			[]string{"--topic is required", "--limit must be at least 1", "--after: not a stream id"}},
		{"history", History, []string{"--topic", "a b"}, []string{"--topic: invalid topic"}},
	}
	for _, tt := range tests {
		var stderr bytes.Buffer
		fs := flag.NewFlagSet("hub "+tt.name, flag.ContinueOnError)
		fs.SetOutput(&stderr)
		helped := false
		fs.Usage = func() { helped = true }
		err := tt.cmd(context.Background(), fs, tt.args, Env{Stdout: &bytes.Buffer{}, Stderr: &stderr,
			Getenv: func(string) string { return "" }, DefaultURL: "http://127.0.0.1:1"})
		if !errors.Is(err, cli.ErrUsage) || !helped {
			t.Errorf("hub %s %v = %v (help printed: %v), want cli.ErrUsage and the help", tt.name, tt.args, err, helped)
		}
		for _, w := range tt.want {
			if !strings.Contains(stderr.String(), w) {
				t.Errorf("hub %s %v said %q, want it to name %q", tt.name, tt.args, stderr.String(), w)
			}
		}
		if !strings.HasPrefix(stderr.String(), "hub "+tt.name+": ") {
			t.Errorf("hub %s %v said %q, want it to start with the command's name", tt.name, tt.args, stderr.String())
		}
	}
	fs := flag.NewFlagSet("hub watch", flag.ContinueOnError)
	fs.SetOutput(&bytes.Buffer{})
	if err := Watch(context.Background(), fs, []string{"-h"}, Env{Getenv: func(string) string { return "" }}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("hub watch -h = %v, want flag.ErrHelp", err)
	}
}
