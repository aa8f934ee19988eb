package workflow_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/workflow"
)

// Replicas that sweep at the same moment all see the same stalls before any of them commits one: each stall is
// still published once, counted once and told once, because the verdict's commit is the claim.
func TestConcurrentSweepsClaimEachStallOnce(t *testing.T) {
	const replicas, topics, perTopic = 6, 4, 10
	r := newRig(t)
	cfg := workflow.Config{StallAfter: 10 * time.Second}
	regs := make([]*prometheus.Registry, replicas)
	sweepers := make([]*workflow.Sweeper, replicas)
	for i := range sweepers {
		regs[i] = prometheus.NewRegistry()
		sweepers[i] = r.sweeper(regs[i], cfg)
	}
	for tp := range topics {
		for w := range perTopic {
			r.publish(fmt.Sprintf("fleet.%d", tp), "progress", fmt.Sprintf(`{"workflow":"wf-%d-%d","status":"running"}`, tp, w))
		}
	}
	r.advance(11 * time.Second)
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make([]error, replicas)
	for i, s := range sweepers {
		wg.Go(func() {
			<-start
			errs[i] = s.Sweep(context.Background())
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("replica %d: Sweep = %v", i, err)
		}
	}
	for tp := range topics {
		topic := fmt.Sprintf("fleet.%d", tp)
		seen := map[string]int{}
		for _, h := range r.health(topic) {
			seen[h.Verdict+":"+h.Workflow]++
		}
		for w := range perTopic {
			if n := seen[fmt.Sprintf("stalled:wf-%d-%d", tp, w)]; n != 1 {
				t.Errorf("%s: wf-%d-%d has %d stalled events, want 1", topic, tp, w, n)
			}
		}
	}
	total := 0.0
	for _, reg := range regs {
		v, _ := rig.MetricValue(rig.Gather(t, reg), "hub_workflow_verdicts_total", "verdict="+workflow.Stalled)
		total += v
	}
	if total != topics*perTopic {
		t.Errorf("hub_workflow_verdicts_total{verdict=stalled} summed over replicas = %v, want %d", total, topics*perTopic)
	}
	if got := len(r.kinds()); got != topics*perTopic {
		t.Errorf("notifications = %d, want %d", got, topics*perTopic)
	}
}
