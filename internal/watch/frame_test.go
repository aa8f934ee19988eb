package watch

import (
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestReadFrames(t *testing.T) {
	in := "retry: 3000\n\n:heartbeat\nid: 1-0\ndata: hi\n\nevent: reset\ndata: {}\n\n" +
		"id: 6-0\nevent: e\ntrace: 4bf92f3577b34da6a3ce929d0e0e4736\ndata: d\n\n"
	want := []Frame{
		{Retry: 3 * time.Second},
		{Comment: "heartbeat", IsComment: true},
		{ID: "1-0", HasID: true, Event: "message", Data: "hi"},
		{Event: "reset", Data: "{}"},
		{ID: "6-0", HasID: true, Event: "e", Data: "d", Trace: "4bf92f3577b34da6a3ce929d0e0e4736"},
	}
	var got []Frame
	err := readFrames(strings.NewReader(in), func(f Frame) bool { got = append(got, f); return true })
	if err != io.EOF || !reflect.DeepEqual(got, want) {
		t.Errorf("readFrames(%q) = %v,\n got %+v\nwant %+v", in, err, got, want)
	}
}

func TestReadFramesStopsWhenEmitSaysSo(t *testing.T) {
	n := 0
	err := readFrames(strings.NewReader(":a\n:b\n:c\n"), func(Frame) bool { n++; return n < 2 })
	if err != nil || n != 2 {
		t.Errorf("readFrames with emit stopping at 2 = %v after %d frames, want nil after 2", err, n)
	}
}
