package sse

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/hub/hubtest"
)

func TestParseCursor(t *testing.T) {
	at := func(ms, seq uint64) hub.From { return hub.From{After: hub.ID{Ms: ms, Seq: seq}, Set: true} }
	fresh := hub.From{}
	earliest := hub.From{Set: true, Earliest: true}
	cases := []struct {
		topics []string
		raw    string
		want   []hub.From // nil: an error
	}{
		{[]string{"a"}, "", []hub.From{fresh}},
		{[]string{"a", "b"}, "", []hub.From{fresh, fresh}},
		{[]string{"a"}, "1732870000000-0", []hub.From{at(1732870000000, 0)}},
		{[]string{"a"}, "0-0", []hub.From{at(0, 0)}},
		{[]string{"a"}, "a=5-1", []hub.From{at(5, 1)}},
		{[]string{"a"}, "b=5-1", []hub.From{fresh}}, // a position for a topic not asked for is ignored
		{[]string{"a", "b"}, "a=1-0;b=2-3", []hub.From{at(1, 0), at(2, 3)}},
		{[]string{"a", "b"}, "b=2-3", []hub.From{fresh, at(2, 3)}},
		{[]string{"a", "b"}, "b=2-3;zz=9-9", []hub.From{fresh, at(2, 3)}},
		{[]string{"p.1:x-y_z", "q"}, "p.1:x-y_z=7-7", []hub.From{at(7, 7), fresh}},
		{[]string{"a"}, "earliest", []hub.From{earliest}},
		{[]string{"a", "b"}, "earliest", []hub.From{earliest, earliest}},         // alone: every topic
		{[]string{"a", "b"}, "a=earliest;b=2-3", []hub.From{earliest, at(2, 3)}}, // one position of a cursor
		{[]string{"a"}, "Earliest", nil},                                         // the keyword is lower case
		{[]string{"a", "b"}, "a=earliest;a=1-0", nil},                            // still a topic twice
		{[]string{"a", "b"}, "1-0", nil},                                         // a bare id needs one topic
		{[]string{"a"}, "1-0 ", nil},                                             // no trimming
		{[]string{"a"}, "x", nil},                                                // not an id
		{[]string{"a"}, "1-", nil},                                               // half an id
		{[]string{"a"}, "a=", nil},                                               // no position
		{[]string{"a"}, "a=x", nil},                                              // a bad position
		{[]string{"a"}, "=1-0", nil},                                             // no topic
		{[]string{"a"}, "a{=1-0", nil},                                           // a bad topic
		{[]string{"a", "b"}, "a=1-0;", nil},                                      // an empty part
		{[]string{"a", "b"}, "a=1-0;;b=2-0", nil},                                // an empty part inside
		{[]string{"a", "b"}, "a=1-0;b", nil},                                     // a part without =
		{[]string{"a", "b"}, "a=1-0;a=2-0", nil},                                 // a topic twice
		{[]string{"a"}, "a=1-0=2", nil},                                          // = in the position
		{[]string{"a"}, "a=1-0\n", nil},                                          // a line break
	}
	for _, c := range cases {
		got, err := ParseCursor(c.topics, c.raw)
		if c.want == nil {
			if !errors.Is(err, ErrBadCursor) {
				t.Errorf("ParseCursor(%q, %q) = %+v, %v; want an error wrapping ErrBadCursor", c.topics, c.raw, got, err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ParseCursor(%q, %q) = %+v, %v; want %+v, nil", c.topics, c.raw, got, err, c.want)
		}
	}
}

func TestParseCursorClipsLongInputInErrors(t *testing.T) {
	raw := strings.Repeat("x", 5000)
	_, err := ParseCursor([]string{"a"}, raw)
	if err == nil || len(err.Error()) > 200 {
		t.Errorf("ParseCursor(5000 x) error is %d bytes, want a short, clipped message", len(err.Error()))
	}
}

// TestAppendCursorRoundTrip: the cursor written for a multi-topic stream parses back to the same positions.
func TestAppendCursorRoundTrip(t *testing.T) {
	h := hub.New(hubtest.NewStore(), hub.Config{})
	defer h.Close()
	topics := []string{"a", "b.2", "c:3"}
	sub, err := h.Subscribe(topics)
	if err != nil {
		t.Fatalf("Subscribe(%q): %v", topics, err)
	}
	defer sub.Close()
	for _, ev := range []*hub.Event{stored("b.2", "5-1", "x", "1"), stored("c:3", "9-0", "x", "1")} {
		sub.Advance(ev)
	}
	ev := stored("a", "7-2", "x", "1")
	sub.Advance(ev)
	cur := string(appendCursor(nil, sub, ev))
	if want := "a=7-2;b.2=5-1;c:3=9-0"; cur != want {
		t.Errorf("appendCursor after a=7-2, b.2=5-1, c:3=9-0 = %q, want %q", cur, want)
	}
	from, err := ParseCursor(topics, cur)
	if err != nil {
		t.Fatalf("ParseCursor(%q) = %v", cur, err)
	}
	for i := range topics {
		if id, _ := sub.Position(i); !from[i].Set || from[i].After != id {
			t.Errorf("ParseCursor(%q)[%s] = %+v, want after %v", cur, topics[i], from[i], id)
		}
	}
}

func FuzzParseCursor(f *testing.F) {
	for _, s := range []string{"", "1-0", "a=1-0", "a=1-0;b=2-0", "a=1-0;a=1-0", ";", "=", "a=;", "b=18446744073709551615-18446744073709551615", "earliest", "a=earliest;b=1-0"} {
		f.Add(s, 2)
	}
	f.Fuzz(func(t *testing.T, raw string, n int) {
		topics := []string{"a", "b", "c.d"}[:1+(n&1)+(n>>1&1)]
		from, err := ParseCursor(topics, raw)
		if err != nil {
			if !errors.Is(err, ErrBadCursor) {
				t.Fatalf("ParseCursor(%q, %q) error %v does not wrap ErrBadCursor", topics, raw, err)
			}
			if len(err.Error()) > 400 {
				t.Fatalf("ParseCursor(%q) error is %d bytes long: input not clipped", raw, len(err.Error()))
			}
			return
		}
		if len(from) != len(topics) {
			t.Fatalf("ParseCursor(%q, %q) gave %d positions, want %d", topics, raw, len(from), len(topics))
		}
		// Accepted positions round-trip through the cursor the stream would write.
		var parts []string
		for i, f := range from {
			switch {
			case f.Earliest:
				parts = append(parts, topics[i]+"="+Earliest)
			case f.Set:
				parts = append(parts, topics[i]+"="+f.After.String())
			}
		}
		again, err := ParseCursor(topics, strings.Join(parts, ";"))
		if err != nil || !slices.Equal(again, from) {
			t.Fatalf("ParseCursor(%q) = %+v; its canonical form %q parses to %+v, %v", raw, from, strings.Join(parts, ";"), again, err)
		}
	})
}
