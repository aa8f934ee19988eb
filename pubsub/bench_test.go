package pubsub

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/rig"
)

func benchData(n int) []byte {
	return fmt.Appendf(nil, `{"workflow":"wf-%d","step":"compile","progress":0.4,"status":"running","pad":"%s"}`, n, strings.Repeat("x", 40))
}

// BenchmarkReplay10000 reads 10,000 stored events the way a resuming client's replay does: pages of 1,000 (the hub's
// ReplayPage), each after the last id of the one before. One op is the whole replay.
func BenchmarkReplay10000(b *testing.B) {
	srv := rig.StartRedis(b)
	rdb := srv.Client()
	ctx := context.Background()
	prefix := rig.Prefix(b)
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
			page, _, err := st.Read(ctx, "project.42", after, 1000)
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
// keys=true gives every event its own idempotency key, as hub publish and the examples do: the script's GET and SET
// of the key's record are the cost measured against keys=false.
func BenchmarkPublishBatch(b *testing.B) {
	for _, keyed := range []bool{false, true} {
		b.Run(fmt.Sprintf("keys=%v", keyed), func(b *testing.B) {
			srv := rig.StartRedis(b)
			rdb := srv.Client()
			ctx := context.Background()
			pub := NewPublisher(rdb, PublisherConfig{Prefix: rig.Prefix(b)})
			msgs := make([]Message, 256)
			for i := range msgs {
				msgs[i] = Message{Topic: "project.42", Data: benchData(i)}
			}
			b.ReportAllocs()
			round := 0
			for b.Loop() {
				if keyed {
					for i := range msgs {
						msgs[i].IdempotencyKey = fmt.Sprintf("agent-1/%d/%d", round, i)
					}
				}
				round++
				if _, errs := pub.PublishBatch(ctx, msgs); errs[0] != nil {
					b.Fatal(errs[0])
				}
			}
			b.ReportMetric(float64(b.N*len(msgs))/b.Elapsed().Seconds(), "events/s")
			reportScriptTime(b, srv)
		})
	}
}

// BenchmarkPublishOne is one publish at a time, each waiting for its answer: the round trip POST /publish and
// hub publish make, with and without an idempotency key.
func BenchmarkPublishOne(b *testing.B) {
	for _, keyed := range []bool{false, true} {
		b.Run(fmt.Sprintf("keys=%v", keyed), func(b *testing.B) {
			srv := rig.StartRedis(b)
			ctx := context.Background()
			pub := NewPublisher(srv.Client(), PublisherConfig{Prefix: rig.Prefix(b)})
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				m := Message{Topic: "project.42", Data: benchData(n)}
				if keyed {
					m.IdempotencyKey = fmt.Sprintf("agent-1/%d", n)
				}
				n++
				if _, err := pub.PublishMessage(ctx, m); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
			reportScriptTime(b, srv)
		})
	}
}

// reportScriptTime reports the real server's own time per script run (INFO commandstats), which a busy machine's
// scheduling of the benchmark's client does not blur as much as the throughput.
func reportScriptTime(b *testing.B, srv *rig.Redis) {
	if !srv.Real() {
		return
	}
	info, err := srv.Client().Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_evalsha:"); ok {
			for _, f := range strings.Split(rest, ",") {
				if v, ok := strings.CutPrefix(f, "usec_per_call="); ok {
					us, _ := strconv.ParseFloat(v, 64)
					b.ReportMetric(us, "redis-µs/event")
				}
			}
		}
	}
}
