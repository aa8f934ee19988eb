package workflow_test

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/pubsub"
	"github.com/syncverse/hub/workflow"
)

// floodRig is a real Redis (the test reads its network counters) with one flooded topic and one quiet one.
func floodRig(t *testing.T) *sweepRig {
	rs := rig.StartRedisWith(t, rig.RedisOptions{})
	p := rig.Prefix(t)
	r := &sweepRig{t: t, rdb: rs.Client(), prefix: p}
	r.sync()
	r.pub = pubsub.NewPublisher(r.rdb, pubsub.PublisherConfig{Prefix: p, MaxLen: 100000})
	return r
}

// netOut is how many bytes Redis has sent its clients so far.
func netOut(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	info, err := rdb.Info(context.Background(), "stats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "total_net_output_bytes:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	t.Fatal("INFO stats has no total_net_output_bytes")
	return 0
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func stateSize(t *testing.T, r *sweepRig, topic string) (workflows int, bytes int64) {
	t.Helper()
	ctx := context.Background()
	key := pubsub.Keys{Prefix: r.prefix}.State(topic)
	fields, err := r.rdb.HKeys(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fields {
		if strings.HasPrefix(f, "wf:") {
			workflows++
		}
		n, _ := r.rdb.HStrLen(ctx, key, f).Result()
		bytes += n + int64(len(f))
	}
	return workflows, bytes
}

// One publisher floods its topic with failed workflows carrying large data. The sweeper holds none of that data,
// keeps the topic's state under its ceilings in workflows and bytes (counting what it deleted, and deleting the
// flooded topic's workflows before a quiet topic's when the total is past its ceiling), and a sweep after a few new
// events reads a bounded amount from Redis whatever the topic's size.
func TestFloodedTopicIsTrimmedAndCostsABoundedSweep(t *testing.T) {
	r := floodRig(t)
	const flood, size = 400, 30 << 10
	pad := strings.Repeat("x", size)
	for i := range 20 {
		r.publish("quiet.1", "progress", fmt.Sprintf(`{"workflow":"q-%d","status":"running"}`, i))
	}
	for i := range flood {
		r.publish("project.1", "progress", fmt.Sprintf(`{"workflow":"wf-%d","status":"failed","message":%q}`, i, pad))
	}
	reg := prometheus.NewRegistry()
	cfg := workflow.Config{MaxTopicWorkflows: 200, MaxTopicStateBytes: 2 << 20, MaxWorkflows: 60, Now: r.clock}
	before := heapInUse()
	told := &counter{}
	cfg.Metrics = workflow.NewMetrics(reg, nil)
	s := workflow.New(pubsub.NewWorkflows(r.pub), told, cfg)
	r.sweep(s)
	r.sweep(s)
	held := int64(heapInUse()) - int64(before)
	runtime.KeepAlive(s)
	if held > 3<<20 {
		t.Errorf("the sweeper holds %d KiB after sweeping %d workflows of %d KiB each; want under 3 MiB (no event data)",
			held>>10, flood, size>>10)
	}
	n, bytes := stateSize(t, r, "project.1")
	if n > 60 || bytes > 2<<20 {
		t.Errorf("flooded topic's state after two sweeps: %d workflows, %d KiB; want at most 60 (max_workflows) and 2 MiB",
			n, bytes>>10)
	}
	if q, _ := stateSize(t, r, "quiet.1"); q != 20 {
		t.Errorf("quiet topic's state: %d workflows, want its 20 kept (the largest topic gives way first)", q)
	}
	fams := rig.Gather(t, reg)
	var trimmed float64
	for _, reason := range workflow.TrimReasons {
		v, _ := rig.MetricValue(fams, "hub_workflow_state_trimmed_total", "reason="+reason)
		trimmed += v
	}
	if want := float64(flood - n); trimmed != want {
		t.Errorf("hub_workflow_state_trimmed_total sums to %v, want %v (the workflows deleted)", trimmed, want)
	}
	if v, _ := rig.MetricValue(fams, "hub_workflow_state_trimmed_total", "reason="+workflow.TrimTopicBytes); v == 0 {
		t.Errorf("hub_workflow_state_trimmed_total{reason=topic_bytes} = 0, want the workflows past 2 MiB counted")
	}
	if v, _ := rig.MetricValue(fams, "hub_workflow_state_bytes"); v <= 0 || v > 3<<20 {
		t.Errorf("hub_workflow_state_bytes = %v, want the kept state's size (0 < size <= 3 MiB)", v)
	}

	// A few new events on the (trimmed, still large) topic: the next sweep that reads it (a rescan, the topic having
	// nothing under way) reads their envelopes reduced, and the other fields' ids only.
	for i := range 5 {
		r.publish("project.1", "progress", fmt.Sprintf(`{"workflow":"new-%d","status":"running","message":%q}`, i, pad))
	}
	r.advance(workflow.DefaultRescan + time.Second)
	out := netOut(t, r.rdb)
	r.sweep(s)
	if sent := netOut(t, r.rdb) - out; sent > 64<<10 {
		t.Errorf("a sweep after 5 new events on a topic of %d workflows of %d KiB read %d KiB from Redis; want under 64 KiB",
			n, size>>10, sent>>10)
	}
	if got, _ := stateSize(t, r, "project.1"); got > 60 || got < 5 {
		t.Errorf("flooded topic after the rescan: %d workflows, want the 5 new ones read and the total under 60", got)
	}
	if told.n.Load() < flood-200 {
		t.Errorf("%d failed workflows notified, want at least the %d past max_topic_workflows", told.n.Load(), flood-200)
	}
}

// counter is a Notifier that counts notifications and keeps none of them.
type counter struct{ n atomic.Int64 }

func (c *counter) Notify(context.Context, workflow.Notification) error {
	c.n.Add(1)
	return nil
}

// Many topics changing at once: a sweep reads no more than its budget of fields, counts the topics it left, and
// reads those first at the next sweep, so every topic is judged within a few sweeps.
func TestSweepDefersTopicsPastItsBudget(t *testing.T) {
	r := floodRig(t)
	for i := range 4 {
		for j := range 5 {
			r.publish(fmt.Sprintf("many.%d", i), "progress", fmt.Sprintf(`{"workflow":"w%d","status":"failed"}`, j))
		}
	}
	reg := prometheus.NewRegistry()
	told := &counter{}
	s := workflow.New(pubsub.NewWorkflows(r.pub), told, workflow.Config{SweepFields: 5,
		Metrics: workflow.NewMetrics(reg, nil), Now: r.clock})
	r.sweep(s)
	if got := told.n.Load(); got != 5 {
		t.Errorf("first sweep with a budget of 5 fields over 4 topics of 5 failed workflows: %d notified, want one topic's 5", got)
	}
	if v, _ := rig.MetricValue(rig.Gather(t, reg), "hub_workflow_sweep_deferred_total"); v != 3 {
		t.Errorf("hub_workflow_sweep_deferred_total = %v after the first sweep, want 3 topics deferred", v)
	}
	for range 3 {
		r.sweep(s)
	}
	if got := told.n.Load(); got != 20 {
		t.Errorf("after 4 sweeps: %d failed workflows notified, want all 20", got)
	}
}
