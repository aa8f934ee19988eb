package hubtest

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/internal/rig"
)

// Cmd is one `hub ...` command run in-process with Run, until its context is cancelled or it returns.
type Cmd struct {
	background
	stderr *rig.SyncBuffer
}

// StartCmd runs `hub args...` with stdout (a terminal or a buffer) and the environment env ("KEY=VALUE").
func StartCmd(t *testing.T, stdout io.Writer, env []string, args ...string) *Cmd {
	t.Helper()
	vars := rig.WithEnv(map[string]string{}, env)
	stderr := &rig.SyncBuffer{}
	c := &Cmd{stderr: stderr, background: goRun(func(ctx context.Context) error {
		return Run(ctx, args, func(k string) string { return vars[k] }, strings.NewReader(""), stdout, stderr, nil)
	})}
	t.Cleanup(func() { _ = c.Stop(t) })
	return c
}

// Stop cancels the command, as Ctrl-C does through main's signal context, and returns what Run returned.
func (c *Cmd) Stop(t *testing.T) error {
	t.Helper()
	return c.stop(t, 10*time.Second)
}

// Stderr is what the command wrote to stderr so far.
func (c *Cmd) Stderr() string { return c.stderr.String() }

// RunCmd runs `hub args...` to its end and returns what Run returned.
func RunCmd(t *testing.T, stdout io.Writer, env []string, args ...string) (stderr string, err error) {
	t.Helper()
	c := StartCmd(t, stdout, env, args...)
	select {
	case err = <-c.done:
		c.returned()
		return c.stderr.String(), err
	case <-time.After(15 * time.Second):
		t.Fatalf("hub %v did not return within 15s", args)
		return "", nil
	}
}
