package sseframe

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// seen is a Frame in strings, to compare.
type seen struct {
	ID, Event, Data, Retry, Comment string
	HasID, HasData, IsComment       bool
}

func readAll(t *testing.T, in string) []seen {
	t.Helper()
	r := NewReader(strings.NewReader(in), 16)
	var out []seen
	for {
		f, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("Next(%q) = %v", in, err)
		}
		out = append(out, seen{string(f.ID), string(f.Event), string(f.Data), string(f.Retry), string(f.Comment),
			f.HasID, f.HasData, f.IsComment})
	}
}

func TestReader(t *testing.T) {
	tests := []struct {
		name, in string
		want     []seen
	}{
		{"retry hint and event", "retry: 3000\n\nid: 1-0\nevent: progress\ndata: {\"a\":1}\n\n", []seen{
			{Retry: "3000"},
			{ID: "1-0", HasID: true, Event: "progress", Data: `{"a":1}`, HasData: true},
		}},
		{"multi-line data", "id: 2-0\nevent: log\ndata: {\"x\":\ndata: 1}\n\n", []seen{
			{ID: "2-0", HasID: true, Event: "log", Data: "{\"x\":\n1}", HasData: true},
		}},
		{"heartbeat comment", ":heartbeat\n\n", []seen{{Comment: "heartbeat", IsComment: true}}},
		{"comment inside a message", "id: 1-0\n:hb\ndata: d\n\n", []seen{
			{Comment: "hb", IsComment: true},
			{ID: "1-0", HasID: true, Data: "d", HasData: true},
		}},
		{"empty data line", "data:\n\n", []seen{{HasData: true}}},
		{"CRLF and lone CR line ends", "id: 3-0\r\nevent: e\rdata: d\r\n\r\n", []seen{
			{ID: "3-0", HasID: true, Event: "e", Data: "d", HasData: true},
		}},
		{"no space after the colon", "id:4-0\nevent:e\ndata:d\n\n", []seen{
			{ID: "4-0", HasID: true, Event: "e", Data: "d", HasData: true},
		}},
		{"unfinished frame at the end is dropped", "id: 5-0\nevent: e\ndata: d\n", nil},
		{"unknown fields are ignored", "foo: bar\nevent: e\ndata: d\n\n", []seen{{Event: "e", Data: "d", HasData: true}}},
		{"blank lines alone are nothing", "\n\n\r\n", nil},
		{"a line longer than the first buffer", "data: " + strings.Repeat("x", 100) + "\n\n", []seen{
			{Data: strings.Repeat("x", 100), HasData: true},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := readAll(t, tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("frames of %q\n got %+v\nwant %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestReaderReturnsTheReadError(t *testing.T) {
	boom := errors.New("boom")
	r := NewReader(io.MultiReader(strings.NewReader(":a\n"), iotest.ErrReader(boom)), 16)
	if f, err := r.Next(); err != nil || string(f.Comment) != "a" {
		t.Fatalf("Next = %+v, %v; want the comment a", f, err)
	}
	if _, err := r.Next(); !errors.Is(err, boom) {
		t.Errorf("Next after a failed read = %v, want %v", err, boom)
	}
}

func TestHint(t *testing.T) {
	for in, want := range map[string]time.Duration{"3000": 3 * time.Second, "0": 0} {
		if got, ok := (&Frame{Retry: []byte(in)}).Hint(); !ok || got != want {
			t.Errorf("Hint(%q) = %v, %v; want %v, true", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "-1", "1.5", "x", "99999999999999999999"} {
		if got, ok := (&Frame{Retry: []byte(in)}).Hint(); ok {
			t.Errorf("Hint(%q) = %v, true; want no hint", in, got)
		}
	}
}

func FuzzReader(f *testing.F) {
	f.Add("retry: 3000\n\nid: 1-0\nevent: progress\ndata: {}\n\n:heartbeat\n\n")
	f.Add("event: reset\r\ndata: x\r\rdata\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		r := NewReader(strings.NewReader(in), 16)
		for {
			fr, err := r.Next()
			if err != nil {
				return
			}
			if strings.ContainsAny(string(fr.ID)+string(fr.Event)+string(fr.Retry)+string(fr.Comment), "\r\n") {
				t.Fatalf("frame %+v has a line break in a one-line field", fr)
			}
			if fr.IsComment && (fr.HasID || fr.HasData || len(fr.Event) > 0) {
				t.Fatalf("comment frame %+v carries message fields", fr)
			}
		}
	})
}
