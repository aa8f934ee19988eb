package watch

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestScreenRedrawsInPlace(t *testing.T) {
	var out bytes.Buffer
	width := 80
	s := &Screen{W: &out, Topics: []string{"t"}, Model: NewModel(), Size: func() (int, int) { return width, 24 }}
	s.State("live", "")
	s.Tick(t0)
	first := out.String()
	if !strings.HasPrefix(first, syncBegin+hideCursor) || strings.Contains(first, "\x1b[A") {
		t.Errorf("first frame starts %q, want the cursor hidden and no move up", first[:min(len(first), 30)])
	}
	lines := s.drawn
	s.Event(ev("t", 1, "progress", `{"workflow":"w","progress":0.5}`))
	out.Reset()
	s.Tick(t0.Add(100 * time.Millisecond))
	if out.Len() != 0 {
		t.Errorf("a redraw 100ms after the last one: %q, want none before MinInterval", out.String())
	}
	s.Tick(t0.Add(300 * time.Millisecond))
	frame := out.String()
	if want := syncBegin + "\r\x1b[" + strconv.Itoa(lines) + "A"; !strings.HasPrefix(frame, want) {
		t.Errorf("second frame starts %q, want %q (back over the %d lines drawn)", frame[:min(len(frame), 20)], want, lines)
	}
	if !strings.Contains(frame, "█") || !strings.HasSuffix(frame, clearBelow+syncEnd) {
		t.Errorf("second frame has no bar or does not clear below: %q", frame)
	}
	out.Reset()
	s.Tick(t0.Add(800 * time.Millisecond))
	if out.Len() != 0 {
		t.Error("a redraw with nothing changed before a second passed")
	}
	s.Tick(t0.Add(1400 * time.Millisecond))
	if out.Len() == 0 {
		t.Error("no redraw a second after the last one: the clocks would stand still")
	}
	width = 60
	out.Reset()
	s.Tick(t0.Add(3 * time.Second))
	if !strings.Contains(out.String(), clearAll) {
		t.Errorf("after a resize the frame does not start over: %q", out.String()[:30])
	}
	out.Reset()
	s.Close(t0.Add(4 * time.Second))
	if !strings.HasSuffix(out.String(), showCursor) {
		t.Error("Close does not show the cursor again")
	}
}
