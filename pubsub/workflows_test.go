package pubsub

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/workflow"
)

func TestWorkflowsStateReadsProgressLocksAndFences(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		first := b.publish(t, "proj.1", "progress", `{"workflow":"A","status":"queued"}`)
		b.publish(t, "proj.1", "lock", `{"key":"K","holder":"h1","fence":5,"state":"acquired","workflow":"A"}`)
		last := b.publish(t, "proj.1", "progress", `{"workflow":"A","status":"running","eta_s":90}`)
		low := b.publish(t, "proj.1", "lock", `{"key":"K","holder":"h2","fence":3,"state":"acquired","workflow":"B"}`)
		w := b.workflows()
		st, err := w.State(ctx, "proj.1", nil)
		if err != nil {
			t.Fatal(err)
		}
		a := st.Workflows["A"]
		if a == nil || a.EventID.String() != last || a.Start.String() != first || a.Status != "running" ||
			a.ETA.Seconds() != 90 || a.Lock == nil || a.Lock.Fence != 5 || !a.Lock.Held() {
			t.Fatalf("State(proj.1).Workflows[A] = %+v, want latest %s, start %s, running, eta 90s, lock fence 5", a, last, first)
		}
		if l := st.FenceLow["K"]; l == nil || l.Fence != 3 || l.EventID.String() != low || l.Workflow != "B" {
			t.Fatalf("State(proj.1).FenceLow[K] = %+v, want the fence-3 event %s", l, low)
		}
		if st.Cursor != low {
			t.Errorf("State(proj.1).Cursor = %s, want %s", st.Cursor, low)
		}
		var topics []string
		if err := w.Topics(ctx, func(t string) { topics = append(topics, t) }); err != nil || fmt.Sprint(topics) != "[proj.1]" {
			t.Errorf("Topics = %v, %v; want [proj.1]", topics, err)
		}
		cur, err := w.Cursors(ctx, []string{"proj.1", "none"})
		if err != nil || cur[0] != low || cur[1] != "" {
			t.Errorf("Cursors(proj.1, none) = %q, %v; want [%s \"\"]", cur, err, low)
		}
	})
}

// Replicas race to commit the same verdict: one records and publishes it, the others see it recorded.
func TestWorkflowsCommitOnceAcrossReplicas(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		id := b.publish(t, "proj.2", "progress", `{"workflow":"A","status":"running"}`)
		eid, _ := hub.ParseID(id)
		c := workflow.Commit{Topic: "proj.2", Workflow: "A", Mark: workflow.MarkHealth, Value: "stalled " + id,
			Expect: eid, Event: []byte(`{"workflow":"A","verdict":"stalled"}`)}
		var won atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				ok, err := b.workflows().Commit(ctx, c)
				if err != nil {
					t.Errorf("Commit = %v", err)
				}
				if ok {
					won.Add(1)
				}
			})
		}
		wg.Wait()
		if won.Load() != 1 {
			t.Fatalf("Commit by 8 replicas recorded %d times, want 1", won.Load())
		}
		entries, err := b.rdb.XRange(ctx, b.keys.Stream("proj.2"), "-", "+").Result()
		if err != nil || len(entries) != 2 || entries[1].Values["t"] != workflow.EventType {
			t.Fatalf("stream after the verdict = %v, %v; want the progress event and one health event", entries, err)
		}
		st, err := b.workflows().State(ctx, "proj.2", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Workflows["A"]; got.EventID.String() != id || got.Marks[workflow.MarkHealth].Value != c.Value {
			t.Errorf("after the verdict, A = %+v; want its progress event %s kept and the mark %q", got, id, c.Value)
		}
		if st.Workflows["A"].Marks[workflow.MarkHealth].Queued {
			t.Errorf("mark is queued before MarkQueued")
		}
		w := b.workflows()
		if err := w.MarkQueued(ctx, "proj.2", "A", workflow.MarkHealth, c.Value); err != nil {
			t.Fatal(err)
		}
		if st, _ = w.State(ctx, "proj.2", nil); !st.Workflows["A"].Marks[workflow.MarkHealth].Queued {
			t.Errorf("mark not queued after MarkQueued")
		}
		snap, err := b.store().Snapshot(ctx, "proj.2")
		if err != nil || len(snap.Workflows) != 1 {
			t.Errorf("Snapshot after a verdict = %+v, %v; want workflow A only", snap, err)
		}
	})
}

// A stall verdict is not recorded over an event it did not see.
func TestWorkflowsCommitRefusesStaleExpectation(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		old := b.publish(t, "proj.3", "progress", `{"workflow":"A","status":"running"}`)
		b.publish(t, "proj.3", "progress", `{"workflow":"A","status":"running","step":"next"}`)
		eid, _ := hub.ParseID(old)
		ok, err := b.workflows().Commit(ctx, workflow.Commit{Topic: "proj.3",
			Workflow: "A", Mark: workflow.MarkHealth, Value: "stalled " + old, Expect: eid, Event: []byte(`{}`)})
		if err != nil || ok {
			t.Fatalf("Commit over a newer event = %v, %v; want false, nil", ok, err)
		}
		if n, err := b.rdb.XLen(ctx, b.keys.Stream("proj.3")).Result(); err != nil || n != 2 {
			t.Errorf("XLEN = %d, %v; want 2 (no health event)", n, err)
		}
	})
}

// The hub's health events never replace a workflow's progress in the state, so the snapshot keeps its status.
func TestHealthEventLeavesWorkflowStateAlone(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		id := b.publish(t, "proj.4", "progress", `{"workflow":"A","status":"running"}`)
		ok, err := b.workflows().Commit(ctx, workflow.Commit{Topic: "proj.4",
			Workflow: "A", Mark: workflow.MarkHealth, Value: "stalled " + id, Event: []byte(`{"workflow":"A","verdict":"stalled"}`)})
		if err != nil || !ok {
			t.Fatalf("Commit = %v, %v", ok, err)
		}
		snap, err := b.store().Snapshot(ctx, "proj.4")
		if err != nil {
			t.Fatal(err)
		}
		var env struct{ ID, Type string }
		if err := json.Unmarshal(snap.Workflows["A"], &env); err != nil || env.ID != id {
			t.Errorf("snapshot's A = %s, want the progress event %s", snap.Workflows["A"], id)
		}
		if err := json.Unmarshal(snap.Health["A"], &env); err != nil || env.Type != workflow.EventType {
			t.Errorf("snapshot's health of A = %s, want the health event", snap.Health["A"])
		}
	})
}
