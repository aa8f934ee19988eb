package pubsub

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/redistest"
)

func benchData(n int) []byte {
	return fmt.Appendf(nil, `{"workflow":"wf-%d","step":"compile","progress":0.4,"status":"running","pad":"%s"}`, n, strings.Repeat("x", 40))
}

// BenchmarkReplay10000 reads 10,000 stored events the way a resuming client's replay does: pages of 1,000 (the hub's
// ReplayPage), each after the last id of the one before. One op is the whole replay.
func BenchmarkReplay10000(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client()
	ctx := context.Background()
	prefix := redistest.Prefix(b)
	pub := NewPublisher(rdb, PublisherConfig{Prefix: prefix, MaxLen: 20000})
	msgs := make([]Message, 0, 1000)
	for i := range 10000 {
		msgs = append(msgs, Message{Topic: "project.42", Data: benchData(i)})
		if len(msgs) == cap(msgs) {
			if _, errs := pub.PublishBatch(ctx, msgs); errs[0] != nil {
				b.Fatal(errs[0])
			}
			msgs = msgs[:0]
		}
	}
	st := NewHistory(rdb, HistoryConfig{Prefix: prefix})
	b.ReportAllocs()
	for b.Loop() {
		var after hub.ID
		n := 0
		for {
			page, err := st.Read(ctx, "project.42", after, 1000)
			if err != nil {
				b.Fatal(err)
			}
			n += len(page)
			if len(page) < 1000 {
				break
			}
			after = page[len(page)-1].ID
		}
		if n != 10000 {
			b.Fatalf("replay read %d events, want 10000", n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10000, "ns/event")
}

// BenchmarkPublishBatch is one process publishing through the script, pipelined: one op is a batch of 256 events.
func BenchmarkPublishBatch(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client()
	ctx := context.Background()
	pub := NewPublisher(rdb, PublisherConfig{Prefix: redistest.Prefix(b)})
	msgs := make([]Message, 256)
	for i := range msgs {
		msgs[i] = Message{Topic: "project.42", Data: benchData(i)}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, errs := pub.PublishBatch(ctx, msgs); errs[0] != nil {
			b.Fatal(errs[0])
		}
	}
	b.ReportMetric(float64(b.N*len(msgs))/b.Elapsed().Seconds(), "events/s")
}
