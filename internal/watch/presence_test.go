package watch

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestWatchHeaderCountsWatchers: a follower that asks for presence frames asks with presence=1 and hands each frame
// to the sink, which puts the count across the followed topics in the status line; without asking, a presence frame
// is no event and no control. (Before: the header had no count, and a presence frame showed as an event line.)
func TestWatchHeaderCountsWatchers(t *testing.T) {
	ctx := context.Background()
	f := newFollower("a", "b")
	f.History = 1 // the first connection's path: no positions yet
	f.Now = time.Now
	if path, _ := f.eventsPath(); strings.Contains(path, "presence") {
		t.Errorf("a follower that did not ask asks %s", path)
	}
	rec := &recorder{}
	f.Sink = rec
	_ = f.handle(ctx, Frame{Event: "presence", Data: `{"topic":"a","count":2,"hubs":1}`})
	if len(rec.events)+len(rec.controls) != 0 {
		t.Errorf("without presence=1 a presence frame reached the sink: %+v %+v", rec.events, rec.controls)
	}

	f.Presence = true
	if path, _ := f.eventsPath(); !strings.Contains(path, "presence=1") {
		t.Errorf("a follower asking for presence opens %s, want presence=1", path)
	}
	screen := &Screen{W: &strings.Builder{}, Topics: f.Topics, Model: NewModel(), Size: func() (int, int) { return 120, 20 }}
	f.Sink = screen
	_ = f.handle(ctx, Frame{Event: "presence", Data: `{"topic":"a","count":2,"hubs":1}`})
	_ = f.handle(ctx, Frame{Event: "presence", Data: `{"topic":"b","count":3,"hubs":2,"users":["x"]}`})
	_ = f.handle(ctx, Frame{Event: "presence", Data: `{"topic":"a","count":1,"hubs":1}`})
	lines := Table(screen.Model, time.Now(), TableOptions{Width: 120, Height: 20, Topics: "a, b", State: "live"})
	if !strings.Contains(lines[0], "4 watching") {
		t.Errorf("status line %q, want 4 watching (a: 1, b: 3)", lines[0])
	}
	if len(screen.Model.Recent(5)) != 0 {
		t.Errorf("presence frames made log lines: %+v", screen.Model.Recent(5))
	}
}
