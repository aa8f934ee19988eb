package sse

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	promtest "github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/rig"
)

// h2Transports are the transports whose flow control stops a write deterministically: the client's transport
// takes 4 MiB of a stream that is not read, and the handler's write then waits.
var h2Transports = []transport{http2TLS, h2c}

// midWrite stores about n bytes of events, opens a stream that replays them from 0-0 and reads none of it, and
// returns once the handler is held in a write (the client's window is full), with the reader to start when the
// test lets the client read.
func midWrite(t *testing.T, e *env, n int) (read func() *rig.Stream) {
	t.Helper()
	pad := strings.Repeat("x", 16<<10)
	for range n / len(pad) {
		e.store.AddData("a", func(n uint64) []byte { return []byte(`{"n":` + strconv.Itoa(int(n)) + `,"pad":"` + pad + `"}`) })
	}
	resp := e.get(t, "topic=a", http.Header{"Last-Event-ID": {"0-0"}})
	// Held, not merely slow (TLS under -race on one CPU): in the write, and nothing more written for 100 ms of polls.
	written, heldSince := -1.0, time.Time{}
	rig.Eventually(t, wait, "the replay's write held by the client's full window", func() bool {
		w := promtest.ToFloat64(e.hd.cfg.Metrics.written)
		if w != written || goroutinesIn("sse.(*httpOutput).write") != 1 {
			written, heldSince = w, time.Now()
			return false
		}
		return time.Since(heldSince) >= 100*time.Millisecond
	})
	return func() *rig.Stream { return rig.ReadStream(t, resp) }
}

// A stream held in a write when the hub closes is not cut at once: the write has until the final deadline, and a
// client that reads on gets the rest of it, then the closing retry hint, then a clean end. The replay stops there.
func TestEventsEndOnHubCloseMidWrite(t *testing.T) {
	for _, tr := range h2Transports {
		t.Run(tr.name, func(t *testing.T) {
			e := newEnvOver(t, tr, hub.Config{}, Config{Retry: 2 * time.Second})
			read := midWrite(t, e, 5<<20)
			e.hub.Close()
			s := read()
			got := s.UntilEnd(wait)
			if len(got) < 3 || got[0].Retry == "" || got[len(got)-1].Retry == "" {
				t.Fatalf("stream ended with %d frames (%s), want the retry hint, the replay, then a retry hint", len(got), ends(got))
			}
			// The write in progress goes out whole; what the replay had not begun to write is the next replica's.
			for i, f := range got[1 : len(got)-1] {
				if want := strconv.Itoa(i+1) + "-0"; f.ID != want {
					t.Fatalf("frame %d before the closing hint: id %q, want %s: the replay in order, unbroken", i+1, f.ID, want)
				}
			}
			if d := retryMillis(t, got[len(got)-1]); d < time.Second || d >= 3*time.Second {
				t.Errorf("closing retry %v, want in [1s, 3s)", d)
			}
			if s.Err() != io.EOF {
				t.Errorf("body ended with %v, want a clean end (EOF)", s.Err())
			}
		})
	}
}

// A stream whose client reads nothing when the hub closes cannot get the retry hint: its write is cut at the final
// deadline (a second at most), long before its own WriteTimeout, and the stream is reset without the hint.
func TestEventsEndOnHubCloseStuckWriter(t *testing.T) {
	for _, tr := range h2Transports {
		t.Run(tr.name, func(t *testing.T) {
			e := newEnvOver(t, tr, hub.Config{}, Config{Retry: 2 * time.Second, WriteTimeout: time.Minute})
			read := midWrite(t, e, 5<<20)
			start := time.Now()
			e.hub.Close()
			rig.Eventually(t, wait, "the stuck stream's handler to return", func() bool {
				return goroutinesIn("sse.(*stream).serve") == 0
			})
			if d := time.Since(start); d < 900*time.Millisecond {
				t.Errorf("stuck stream cut %v after the hub closed, want the final deadline (1s) first", d)
			}
			s := read()
			got := s.UntilEnd(wait)
			if len(got) == 0 || got[0].Retry == "" {
				t.Fatalf("stream began with %s, want the retry hint", ends(got))
			}
			if last := got[len(got)-1]; len(got) > 1 && last.Retry != "" {
				t.Errorf("stuck stream ended with retry %s: its write was never cut", last.Retry)
			}
			if s.Err() == io.EOF {
				t.Errorf("stuck stream's body ended cleanly, want it reset")
			}
		})
	}
}

// ends names the first and last of frames by id or retry hint: the replay's data is too long to print.
func ends(frames []rig.Frame) string {
	name := func(f rig.Frame) string {
		if f.Retry != "" {
			return "retry " + f.Retry
		}
		return "id " + f.ID
	}
	if len(frames) == 0 {
		return "none"
	}
	return "first " + name(frames[0]) + ", last " + name(frames[len(frames)-1])
}
