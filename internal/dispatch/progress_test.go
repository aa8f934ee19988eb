package dispatch

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/internal/rig"
)

// On a terminal the default run draws its progress in place on stderr, elapsed against expected, and erases it
// before the report; the report on stdout carries none of it. Without a terminal, or with --json, nothing is drawn.
func TestProgressLine(t *testing.T) {
	t.Parallel()
	args := []string{"--ttl", "600ms", "--work", "700ms", "--dispatches", "4", "--entities", "2"}
	for _, c := range []struct {
		name string
		tty  bool
		json bool
		want bool
	}{{"tty", true, false, true}, {"no tty", false, false, false}, {"tty --json", true, true, false}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			var errOut rig.SyncBuffer
			a := args
			if c.json {
				a = append([]string{"--json"}, args...)
			}
			if err := run(context.Background(), testFlags(io.Discard), a, &out, &errOut, "", testLauncher(t), c.tty); err != nil {
				t.Fatalf("dispatch-test %v = %v\n%s", a, err, out.String())
			}
			got := errOut.String()
			if !c.want {
				if got != "" {
					t.Errorf("dispatch-test %v (tty %v) wrote %q on stderr, want nothing", a, c.tty, got)
				}
				return
			}
			// 4 dispatches over 2 entities, two at a time, 700ms each: about 1.4s.
			frame := regexp.MustCompile(`^dispatch-test 0:0\d / ~0:01  completed [0-4]/4  running [0-2]  violations 0\x1b\[K$`)
			frames := strings.Split(got, "\r")[1:]
			if len(frames) < 3 || frames[len(frames)-1] != "\x1b[K" {
				t.Fatalf("stderr = %q, want frames drawn with \\r and the line erased at the end", got)
			}
			for _, f := range frames[:len(frames)-1] {
				if !frame.MatchString(f) {
					t.Errorf("progress frame %q does not match %s", f, frame)
				}
			}
			if strings.ContainsAny(out.String(), "\r\x1b") {
				t.Errorf("the report on stdout carries progress: %q", out.String())
			}
		})
	}
}

func TestTallyExpected(t *testing.T) {
	for _, c := range []struct {
		cfg  config
		want time.Duration
	}{
		{config{dispatches: 100, entities: 10, concurrency: 100, ttl: 30 * time.Second, work: time.Minute}, 10 * time.Minute},
		{config{dispatches: 100, entities: 10, concurrency: 4, ttl: 30 * time.Second, work: time.Minute}, 25 * time.Minute},
		{config{dispatches: 100, entities: 10, concurrency: 100, ttl: 30 * time.Second, work: time.Minute, noWatchdog: true}, 5 * time.Minute},
	} {
		if got := newTally(c.cfg).expected(); got != c.want {
			t.Errorf("expected(%+v) = %v, want %v", c.cfg, got, c.want)
		}
	}
}

// A second holder of one entity counts as a duplicate the moment it starts; with the watchdog it is a violation.
func TestTallyCountsOverlapsLive(t *testing.T) {
	so := newTally(config{dispatches: 3, entities: 1, concurrency: 3, ttl: time.Second, work: time.Second})
	so.begin("e")
	so.begin("e")
	if got := so.line(0); !strings.Contains(got, "running 2  violations 1") {
		t.Errorf("two holders of one entity: line %q, want running 2, violations 1", got)
	}
	so.end("e")
	so.finish(execution{start: time.Now()})
	so.end("e")
	so.finish(execution{start: time.Now(), stale: true})
	so.finish(execution{}) // never acquired
	if got := so.line(0); !strings.Contains(got, "completed 3/3  running 0  violations 3") {
		t.Errorf("after a stale write and a failure: line %q, want completed 3/3, running 0, violations 3", got)
	}
}
