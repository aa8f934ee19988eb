package watch

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/syncverse/hub/hub"
)

// Terminal control sequences of the in-place redraw.
const (
	syncBegin  = "\x1b[?2026h" // terminals that know it show the frame at once, others ignore it
	syncEnd    = "\x1b[?2026l"
	hideCursor = "\x1b[?25l"
	showCursor = "\x1b[?25h"
	clearLine  = "\x1b[K"
	clearBelow = "\x1b[J"
	clearAll   = "\x1b[H\x1b[2J"
)

// Screen is the table sink: it keeps the model and redraws the table in place, at most once per MinInterval, and
// once a second for the clocks (ETA, age).
type Screen struct {
	W      io.Writer
	Size   func() (width, height int) // asked at every draw, so a resized terminal is followed
	Color  bool
	Topics []string
	Model  *Model
	// MinInterval is the least time between two redraws (default 250ms).
	MinInterval time.Duration

	state     string
	dirty     bool
	lastDraw  time.Time
	drawn     int // lines of the last frame, to move back over
	lastWidth int
}

func (s *Screen) Snapshot(topic string, events []Event, truncated bool) {
	s.Model.ClearTopic(topic)
	s.Model.setTruncated(topic, truncated)
	for _, ev := range events {
		s.Model.Apply(ev, true)
	}
	s.dirty = true
}

func (s *Screen) Event(ev Event) {
	s.Model.Apply(ev, false)
	s.dirty = true
}

func (s *Screen) Control(ev Event) {
	if ev.Type == hub.PresenceType {
		s.Model.setWatching(ev.Topic, ev.Data)
		s.dirty = true
		return
	}
	if ev.Type == "reset" {
		s.Model.Resets++
	}
	s.Model.note(controlLine(ev))
	s.dirty = true
}

func (s *Screen) State(state, detail string) {
	s.state = state
	if detail != "" {
		s.state += ": " + detail
	}
	s.dirty = true
}

// Tick redraws when something changed and the last redraw is MinInterval old, or when a second has passed.
func (s *Screen) Tick(now time.Time) {
	since := now.Sub(s.lastDraw)
	if (s.dirty && since >= s.minInterval()) || since >= time.Second {
		s.Draw(now)
	}
}

func (s *Screen) minInterval() time.Duration {
	if s.MinInterval > 0 {
		return s.MinInterval
	}
	return 250 * time.Millisecond
}

// Draw writes one frame: back to the first line of the last frame, every line cleared to its end, anything the last
// frame had below cleared, all in one write.
func (s *Screen) Draw(now time.Time) {
	width, height := s.size()
	lines := Table(s.Model, now, TableOptions{Width: width, Height: height, Color: s.Color,
		MultiTopic: len(s.Topics) > 1, Topics: strings.Join(s.Topics, ", "), State: s.state})
	var b bytes.Buffer
	b.WriteString(syncBegin)
	switch {
	case s.lastDraw.IsZero():
		b.WriteString(hideCursor)
	case width != s.lastWidth:
		b.WriteString(clearAll) // the terminal rewrapped the last frame: its height is unknown now
	case s.drawn > 0:
		fmt.Fprintf(&b, "\r\x1b[%dA", s.drawn)
	}
	for _, l := range lines {
		b.WriteString(l)
		b.WriteString(clearLine + "\r\n")
	}
	b.WriteString(clearBelow + syncEnd)
	s.W.Write(b.Bytes())
	s.drawn, s.lastWidth, s.lastDraw, s.dirty = len(lines), width, now, false
}

// Close draws the last frame and gives the cursor back; the table stays on the terminal.
func (s *Screen) Close(now time.Time) {
	s.Draw(now)
	io.WriteString(s.W, showCursor)
}

func (s *Screen) size() (int, int) {
	w, h := 0, 0
	if s.Size != nil {
		w, h = s.Size()
	}
	if w <= 0 || h <= 0 {
		return 80, 24
	}
	return w, h
}
