package hubtest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/internal/rig"
)

// Served is the program run in the background by Serve, with what it wrote so far.
type Served struct {
	URL            string // where it said it listens
	Stdout, Stderr *rig.SyncBuffer
	t              testing.TB
	background
}

// Serve runs the program with args and env as its whole environment, and returns once it says where it listens.
// The test fails when it returns first or does not listen within 30 s. When the test ends it is stopped, and it
// must return nil then, unless the test stopped it first with Stop.
func Serve(t testing.TB, args []string, env map[string]string) *Served {
	t.Helper()
	s := &Served{Stdout: &rig.SyncBuffer{}, Stderr: &rig.SyncBuffer{}, t: t}
	urls := make(chan string, 1)
	s.background = goRun(func(ctx context.Context) error {
		return Run(ctx, args, func(k string) string { return env[k] }, strings.NewReader(""), s.Stdout, s.Stderr,
			func(url string) { urls <- url })
	})
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("run(%v) = %v, want nil", args, err)
		}
	})
	select {
	case s.URL = <-urls:
	case err := <-s.done:
		s.returned()
		t.Fatalf("run(%v) = %v before listening; logs:\n%s", args, err, s.Stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("run(%v) did not listen within 30s; logs:\n%s", args, s.Stderr)
	}
	return s
}

// Stop cancels the run and returns what it returned; once stopped, Stop returns nil.
func (s *Served) Stop() error { return s.stop(s.t, 30*time.Second) }
