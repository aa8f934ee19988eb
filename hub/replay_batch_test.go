package hub

import (
	"bytes"
	"fmt"
	"testing"
)

// batchSink records the size of each batch it is handed.
type batchSink struct {
	recSink
	sizes []int // bytes of data per Deliver
	lens  []int
}

func (b *batchSink) Deliver(batch []*Event) error {
	n := 0
	for _, ev := range batch {
		n += len(ev.Data)
	}
	b.sizes, b.lens = append(b.sizes, n), append(b.lens, len(batch))
	return b.recSink.Deliver(batch)
}

// TestReplayHandedToWriterInSmallBatches: a replayed page of large events reaches the sink a few at a time, each
// batch within replayBatchBytes (or one event), so a client that does not read holds one small buffer, not a page.
func TestReplayHandedToWriterInSmallBatches(t *testing.T) {
	st := newFakeStore()
	for _, ev := range st.append("t", 40) {
		ev.Data = fmt.Appendf(nil, `{"n":%d,"x":"%s"}`, ev.ID.Ms, bytes.Repeat([]byte("x"), 60<<10))
	}
	st.append("t", 300) // small ones too: a batch also ends at replayBatchEvents
	h := New(st, Config{})
	s := mustSubscribe(t, h, "t")
	sink := &batchSink{}
	mustStart(t, s, []From{{Set: true}}, sink)
	if got := len(sink.got()); got != 340 {
		t.Fatalf("Start delivered %d events, want 340", got)
	}
	for i, n := range sink.sizes {
		if (n > replayBatchBytes && sink.lens[i] > 1) || sink.lens[i] > replayBatchEvents {
			t.Errorf("Deliver #%d: %d events, %d bytes; want at most %d events and %d bytes (or one event)",
				i+1, sink.lens[i], n, replayBatchEvents, replayBatchBytes)
		}
	}
}
