package sse

import (
	"strings"
	"testing"

	"github.com/syncverse/hub/hub"
)

// start_id=1 on every transport: once the replay is done, an id-only frame with the stream's position, before the
// live events; the position covers what was replayed.
func TestEventsStartIDFrame(t *testing.T) {
	overTransports(t, func(t *testing.T, tr transport) {
		e := newEnvOver(t, tr, hub.Config{}, Config{})
		e.store.Add("a", 3)
		s := e.open(t, "topic=a&start_id=1", "")
		f := s.Next(wait)
		for f.Retry != "" || f.Comment != "" {
			f = s.Next(wait)
		}
		if !f.HasID || f.ID != "3-0" || f.Event != "" || f.Data != "" {
			t.Fatalf("start_id=1: first frame %+v, want the id-only frame 3-0", f)
		}
		h := e.open(t, "topic=a&history=2&start_id=1", "")
		var got []string
		for range 3 {
			g := h.Next(wait)
			for g.Retry != "" || g.Comment != "" {
				g = h.Next(wait)
			}
			got = append(got, g.ID+"/"+g.Event)
		}
		if want := "2-0/progress 3-0/progress 3-0/"; strings.Join(got, " ") != want {
			t.Errorf("history=2&start_id=1: frames %q, want the replay then the start id (%s)", got, want)
		}
	})
}
