package progress

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/syncverse/hub/internal/rig"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The line is redrawn in place: every frame starts with \r and clears the rest of the row, the text is cut to the
// width, and Stop erases it and waits for the drawing goroutine.
func TestLineRedrawsInPlace(t *testing.T) {
	var out rig.SyncBuffer
	var n atomic.Int64
	l := Start(&out, 5*time.Millisecond, func() string {
		if n.Add(1) == 2 {
			return strings.Repeat("x", 200)
		}
		return "step " + string(rune('0'+n.Load()%10))
	})
	deadline := time.Now().Add(5 * time.Second)
	for n.Load() < 4 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // the ticker's pace; nothing else to wait on
	}
	l.Stop()
	l.Stop() // idempotent
	frames := strings.Split(out.String(), "\r")[1:]
	if len(frames) < 4 {
		t.Fatalf("Start drew %q, want at least 3 frames and the erase", out.String())
	}
	if frames[0] != "step 1\x1b[K" {
		t.Errorf("first frame = %q, want %q", frames[0], "step 1\x1b[K")
	}
	if want := strings.Repeat("x", width) + "\x1b[K"; frames[1] != want {
		t.Errorf("a long frame = %q (%d bytes), want it cut to %d columns", frames[1], len(frames[1]), width)
	}
	if last := frames[len(frames)-1]; last != "\x1b[K" {
		t.Errorf("after Stop the output ends with %q, want the erase \\r\\x1b[K", last)
	}
	if got := out.String(); strings.Contains(got, "\n") {
		t.Errorf("the line wrote a newline: %q", got)
	}
}

// Without a writer nothing is drawn and no goroutine starts (goleak would see it), and text is never called.
func TestLineWithoutTerminal(t *testing.T) {
	l := Start(nil, time.Millisecond, func() string { t.Error("text called without a terminal"); return "" })
	time.Sleep(5 * time.Millisecond)
	l.Stop()
}

func TestClock(t *testing.T) {
	for _, c := range []struct {
		elapsed, expected time.Duration
		want              string
	}{
		{0, 0, "0:00"},
		{12*time.Second + 400*time.Millisecond, 3 * time.Minute, "0:12 / ~3:00"},
		{61 * time.Second, 0, "1:01"},
		{2*time.Hour + 3*time.Minute + 4*time.Second, 3 * time.Hour, "2:03:04 / ~3:00:00"},
	} {
		if got := Clock(c.elapsed, c.expected); got != c.want {
			t.Errorf("Clock(%v, %v) = %q, want %q", c.elapsed, c.expected, got, c.want)
		}
	}
}
