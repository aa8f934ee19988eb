package progress

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// width bounds the line: a line longer than the terminal wraps, and \r would then redraw only its last row.
const width = 79

// Line is a status line being drawn.
type Line struct {
	w    io.Writer
	text func() string
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// Start draws text() on w at once and every period until Stop. A nil w draws nothing.
func Start(w io.Writer, every time.Duration, text func() string) *Line {
	l := &Line{w: w, text: text, stop: make(chan struct{}), done: make(chan struct{})}
	if w == nil {
		close(l.done)
		return l
	}
	go l.loop(every)
	return l
}

func (l *Line) loop(every time.Duration) {
	defer close(l.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		s := []rune(l.text())
		if len(s) > width {
			s = s[:width]
		}
		fmt.Fprintf(l.w, "\r%s\x1b[K", string(s)) // \x1b[K clears what a longer previous line left
		select {
		case <-l.stop:
			fmt.Fprint(l.w, "\r\x1b[K")
			return
		case <-t.C:
		}
	}
}

// Stop erases the line and returns once nothing draws it any more. It is idempotent.
func (l *Line) Stop() {
	l.once.Do(func() { close(l.stop) })
	<-l.done
}

// Clock is elapsed against expected, "0:12 / ~3:00"; just the elapsed time when nothing is expected.
func Clock(elapsed, expected time.Duration) string {
	if expected <= 0 {
		return clock(elapsed)
	}
	return clock(elapsed) + " / ~" + clock(expected)
}

func clock(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
