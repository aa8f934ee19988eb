package workflow_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/syncverse/hub/pubsub"
	"github.com/syncverse/hub/workflow"
)

// BenchmarkSweep10kWorkflows tracks 10,000 running workflows over 1,000 topics and measures the first sweep (every
// state read, and the heap the tracked workflows hold) and a sweep when nothing changed (the steady state: one
// pipelined HGET per busy topic, and every workflow judged).
func BenchmarkSweep10kWorkflows(b *testing.B) {
	const topics, perTopic = 1000, 10
	r := newRig(b)
	ctx := context.Background()
	var msgs []pubsub.Message
	for i := range topics {
		for j := range perTopic {
			msgs = append(msgs, pubsub.Message{Topic: fmt.Sprintf("bench.%d", i), Type: "progress",
				Data: fmt.Appendf(nil, `{"workflow":"wf-%d-%d","status":"running","step":"compile","progress":0.5}`, i, j)})
		}
	}
	for i := 0; i < len(msgs); i += 500 {
		if _, errs := r.pub.PublishBatch(ctx, msgs[i:min(i+500, len(msgs))]); errs[0] != nil {
			b.Fatal(errs[0])
		}
	}
	s := workflow.New(pubsub.NewWorkflows(r.pub), r, workflow.Config{StallAfter: time.Hour})
	b.Run("first", func(b *testing.B) {
		for b.Loop() {
			var before, after runtime.MemStats
			s = nil // the sweeper of the last round is garbage before the count starts
			runtime.GC()
			runtime.ReadMemStats(&before)
			s = workflow.New(pubsub.NewWorkflows(r.pub), r, workflow.Config{StallAfter: time.Hour})
			if err := s.Sweep(ctx); err != nil {
				b.Fatal(err)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/(topics*perTopic), "heap-B/workflow")
		}
	})
	b.Run("unchanged", func(b *testing.B) {
		for b.Loop() {
			if err := s.Sweep(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
