package e2e

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/syncverse/hub/internal/rig"
)

// ptyTerm is a pseudo-terminal of cols×rows; what the program writes to TTY is collected from its other side.
type ptyTerm struct {
	TTY  *os.File
	out  *rig.SyncBuffer
	ptmx *os.File
	read chan struct{}
}

func newPTY(t *testing.T, cols, rows uint16) *ptyTerm {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	if err := pty.Setsize(ptmx, &pty.Winsize{Cols: cols, Rows: rows}); err != nil {
		t.Fatalf("pty.Setsize: %v", err)
	}
	term := &ptyTerm{TTY: tty, out: &rig.SyncBuffer{}, ptmx: ptmx, read: make(chan struct{})}
	go func() {
		defer close(term.read)
		_, _ = io.Copy(term.out, ptmx) // ends with EIO once the terminal side is closed
	}()
	t.Cleanup(func() {
		tty.Close()
		ptmx.Close()
		<-term.read
	})
	return term
}

var (
	watchFrameRE = regexp.MustCompile(`(?s)\x1b\[\?2026h(.*?)\x1b\[\?2026l`)
	watchCSIRE   = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)
)

// lastFrame is the last whole table the watch drew, raw (with its escape sequences) and as the screen's lines.
func (term *ptyTerm) lastFrame() (raw string, lines []string) {
	frames := watchFrameRE.FindAllStringSubmatch(term.out.String(), -1)
	if len(frames) == 0 {
		return "", nil
	}
	raw = frames[len(frames)-1][1]
	text := strings.ReplaceAll(watchCSIRE.ReplaceAllString(raw, ""), "\r", "")
	return raw, strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

// waitFrame waits until the last frame satisfies ok and returns its lines; on failure the last frame is logged.
func (term *ptyTerm) waitFrame(t *testing.T, within time.Duration, what string, ok func(lines []string) bool) []string {
	t.Helper()
	var lines []string
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last frame while waiting for %s:\n%s", what, strings.Join(lines, "\n"))
		}
	})
	rig.Eventually(t, within, "the table showing "+what, func() bool {
		_, lines = term.lastFrame()
		return lines != nil && ok(lines)
	})
	return lines
}

// tableRow is the table row naming label, or "".
func tableRow(lines []string, label string) string {
	for _, l := range lines {
		if strings.Contains(l, label+" ") {
			return l
		}
	}
	return ""
}

// hasBar says whether row draws a progress bar of the given percentage: full and empty cells in that proportion.
func hasBar(row string, pct int) bool {
	full, empty := strings.Count(row, "█"), strings.Count(row, "░")
	if full+empty < 5 || !strings.Contains(row, fmt.Sprintf(" %d%%", pct)) {
		return false
	}
	return full*100/(full+empty) >= pct-10 && full*100/(full+empty) <= pct+10
}
