package workflow_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/syncverse/hub/pubsub"
	"github.com/syncverse/hub/workflow"
)

// batchCounter is the real Source, counting the States calls a sweep makes and the topics each asks for.
type batchCounter struct {
	workflow.Source
	mu    sync.Mutex
	calls []int
}

func (b *batchCounter) States(ctx context.Context, topics []string, prevs []*workflow.TopicState) ([]*workflow.TopicState, error) {
	b.mu.Lock()
	b.calls = append(b.calls, len(topics))
	b.mu.Unlock()
	return b.Source.States(ctx, topics, prevs)
}

func (b *batchCounter) take() []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.calls
	b.calls = nil
	return c
}

// TestSweepReadsChangedTopicsInBatches: topics never read are read one at a time (their size is unknown, and the
// budget is counted in fields); once read, 100 topics that all changed are read in 4 calls of at most 32, and every
// one of them is judged: the 100 failed workflows are all notified.
func TestSweepReadsChangedTopicsInBatches(t *testing.T) {
	r := floodRig(t)
	for i := range 100 {
		r.publish(fmt.Sprintf("batch.%d", i), "progress", `{"workflow":"w","status":"running"}`)
	}
	src := &batchCounter{Source: pubsub.NewWorkflows(r.pub)}
	told := &counter{}
	s := workflow.New(src, told, workflow.Config{Metrics: workflow.NewMetrics(prometheus.NewRegistry(), nil), Now: r.clock})
	r.sweep(s)
	if calls := src.take(); len(calls) != 100 {
		t.Errorf("first sweep: %d States calls (%v), want 100 of one topic each", len(calls), calls)
	}
	for i := range 100 {
		r.publish(fmt.Sprintf("batch.%d", i), "progress", `{"workflow":"w","status":"failed"}`)
	}
	r.sweep(s)
	if calls := src.take(); fmt.Sprint(calls) != "[32 32 32 4]" {
		t.Errorf("second sweep: States calls of %v topics, want [32 32 32 4]", calls)
	}
	if got := told.n.Load(); got != 100 {
		t.Errorf("%d failed workflows notified, want all 100", got)
	}
}
