package watch

import (
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestReadFrames(t *testing.T) {
	tests := []struct {
		name, in string
		want     []Frame
	}{
		{"retry hint and event", "retry: 3000\n\nid: 1-0\nevent: progress\ndata: {\"a\":1}\n\n", []Frame{
			{Retry: 3 * time.Second},
			{ID: "1-0", HasID: true, Event: "progress", Data: `{"a":1}`},
		}},
		{"multi-line data", "id: 2-0\nevent: log\ndata: {\"x\":\ndata: 1}\n\n", []Frame{
			{ID: "2-0", HasID: true, Event: "log", Data: "{\"x\":\n1}"},
		}},
		{"heartbeat comment", ":heartbeat\n\n", []Frame{{Comment: "heartbeat", IsComment: true}}},
		{"control frame without id", "event: reset\ndata: {\"topic\":\"t\"}\n\n", []Frame{
			{Event: "reset", Data: `{"topic":"t"}`},
		}},
		{"no event field is a message", "data: hi\n\n", []Frame{{Event: "message", Data: "hi"}}},
		{"CRLF and lone CR line ends", "id: 3-0\r\nevent: e\rdata: d\r\n\r\n", []Frame{
			{ID: "3-0", HasID: true, Event: "e", Data: "d"},
		}},
		{"no space after the colon", "id:4-0\nevent:e\ndata:d\n\n", []Frame{{ID: "4-0", HasID: true, Event: "e", Data: "d"}}},
		{"unfinished frame at the end is dropped", "id: 5-0\nevent: e\ndata: d\n", nil},
		{"unknown fields are ignored", "foo: bar\nevent: e\ndata: d\n\n", []Frame{{Event: "e", Data: "d"}}},
		{"trace id", "id: 6-0\nevent: e\ntrace: 4bf92f3577b34da6a3ce929d0e0e4736\ndata: d\n\n", []Frame{
			{ID: "6-0", HasID: true, Event: "e", Data: "d", Trace: "4bf92f3577b34da6a3ce929d0e0e4736"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []Frame
			err := readFrames(strings.NewReader(tt.in), func(f Frame) bool { got = append(got, f); return true })
			if err != io.EOF {
				t.Errorf("readFrames(%q) = %v, want io.EOF", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("readFrames(%q) frames\n got %+v\nwant %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestReadFramesStopsWhenEmitSaysSo(t *testing.T) {
	n := 0
	err := readFrames(strings.NewReader(":a\n:b\n:c\n"), func(Frame) bool { n++; return n < 2 })
	if err != nil || n != 2 {
		t.Errorf("readFrames with emit stopping at 2 = %v after %d frames, want nil after 2", err, n)
	}
}

func FuzzReadFrames(f *testing.F) {
	f.Add("retry: 3000\n\nid: 1-0\nevent: progress\ndata: {}\n\n:heartbeat\n\n")
	f.Add("event: reset\r\ndata: x\r\rdata\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		_ = readFrames(strings.NewReader(in), func(fr Frame) bool {
			if strings.ContainsAny(fr.ID+fr.Event, "\r\n") {
				t.Fatalf("frame %+v has a line break in its id or event", fr)
			}
			return true
		})
	})
}
