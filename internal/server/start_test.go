package server

import (
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/syncverse/hub/internal/rig"
)

// nextFrame is the stream's next frame that is not the retry hint or a comment.
func nextFrame(t *testing.T, s *rig.Stream) rig.Frame {
	t.Helper()
	for {
		if f := s.Next(10 * time.Second); f.Retry == "" && f.Comment == "" {
			return f
		}
	}
}

// Last-Event-ID: earliest (Mercure's keyword), in the header or the last_event_id parameter, replays everything the
// topic still holds from its oldest event, with no reset for what was trimmed before it; 0-0 in its place is a
// position whose successors are gone, answered with a reset.
func TestEventsFromEarliest(t *testing.T) {
	e := newEdge(t, rig.StartRedisWith(t, rig.RedisOptions{}))
	var ids []string
	for i := range 5 {
		ids = append(ids, e.publish(t, "t", "progress", `{"workflow":"wf-`+string(rune('1'+i))+`"}`))
	}
	if err := e.RDB.XTrimMaxLen(t.Context(), e.StreamKey("t"), 3).Err(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, query, header string
	}{
		{"header", "", "earliest"},
		{"query", "earliest", ""},
		{"cursor position", "t=earliest", ""},
	} {
		q := url.Values{"topic": {"t"}}
		if c.query != "" {
			q.Set("last_event_id", c.query)
		}
		s := rig.OpenStream(t, e.URL, q, c.header)
		var got []string
		for range 3 {
			f := nextFrame(t, s)
			if f.Event != "progress" {
				t.Errorf("%s: frame %+v, want the retained progress events only", c.name, f)
			}
			got = append(got, f.ID)
		}
		s.Close()
		if !slices.Equal(got, ids[2:]) {
			t.Errorf("%s: earliest replayed %q, want the 3 retained %q", c.name, got, ids[2:])
		}
	}
	s := rig.OpenStream(t, e.URL, url.Values{"topic": {"t"}}, "0-0")
	defer s.Close()
	if f := nextFrame(t, s); f.Event != "reset" {
		t.Errorf("Last-Event-ID 0-0 after a trim: first frame %+v, want a reset", f)
	}
}

// start_id=1 makes a stream say where it starts: an id-only frame with its position before any live event, which a
// client that reconnects with it as Last-Event-ID resumes from, missing nothing published in between. Without it
// no such frame is sent; another value is refused.
func TestEventsStartID(t *testing.T) {
	e := newEdge(t, rig.StartRedisWith(t, rig.RedisOptions{}))
	last := e.publish(t, "t", "progress", `{"workflow":"wf-1"}`)
	s := rig.OpenStream(t, e.URL, url.Values{"topic": {"t"}, "start_id": {"1"}}, "")
	f := nextFrame(t, s)
	if !f.HasID || f.ID != last || f.Event != "" || f.Data != "" {
		t.Fatalf("start_id=1: first frame %+v, want an id-only frame with %s", f, last)
	}
	s.Close()
	missed := e.publish(t, "t", "progress", `{"workflow":"wf-2"}`)
	again := rig.OpenStream(t, e.URL, url.Values{"topic": {"t"}}, f.ID)
	defer again.Close()
	if g := nextFrame(t, again); g.ID != missed {
		t.Errorf("resumed from the start id %s: frame %+v, want the event published meanwhile (%s)", f.ID, g, missed)
	}

	multi := rig.OpenStream(t, e.URL, url.Values{"topic": {"t", "empty"}, "start_id": {"1"}}, "")
	defer multi.Close()
	if g := nextFrame(t, multi); g.ID != "t="+missed+";empty=0-0" || g.Event != "" {
		t.Errorf("start_id=1 on two topics: first frame %+v, want the cursor t=%s;empty=0-0", g, missed)
	}

	plain := rig.OpenStream(t, e.URL, url.Values{"topic": {"t"}, "history": {"1"}}, "")
	defer plain.Close()
	if g := nextFrame(t, plain); g.ID != missed || g.Event != "progress" {
		t.Errorf("without start_id: first frame %+v, want the replayed event %s (no id-only frame)", g, missed)
	}

	bad := rig.OpenStream(t, e.URL, url.Values{"topic": {"t"}, "start_id": {"yes"}}, "")
	if bad.Status != http.StatusBadRequest {
		t.Errorf("start_id=yes: status %d %s, want 400", bad.Status, bad.Body)
	}
}
