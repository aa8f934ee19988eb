package pubsub

import (
	"context"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/workflow"
)

// commandCounter counts the commands a client sends, pipelined or not, but for a new connection's handshake.
type commandCounter struct{ n atomic.Int64 }

func (c *commandCounter) add(cmd redis.Cmder) {
	if name := cmd.Name(); name != "client" && name != "hello" {
		c.n.Add(1)
	}
}

func (c *commandCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *commandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { c.add(cmd); return next(ctx, cmd) }
}
func (c *commandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			c.add(cmd)
		}
		return next(ctx, cmds)
	}
}

// TestSmallTopicStateIsReadInOneCommand: a topic of a few workflows is read in one command, its scan decoding the
// envelopes that changed since the last read (it is told their ids), whether read alone or in a batch; a topic
// whose last read knew more ids than a scan is told gets its changed envelopes fetched after, and reads the same.
func TestSmallTopicStateIsReadInOneCommand(t *testing.T) {
	b := realBackend(t)
	ctx := ctxFor(t)
	count := &commandCounter{}
	b.rdb.AddHook(count)
	pub := b.publisher(PublisherConfig{})
	w := NewWorkflows(pub)
	publish := func(topic, wf, status string) {
		t.Helper()
		data := fmt.Sprintf(`{"workflow":%q,"status":%q,"eta_s":30}`, wf, status)
		if _, err := pub.Publish(ctx, topic, "progress", []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	read := func(topic string, prev *workflow.TopicState) (*workflow.TopicState, int64) {
		t.Helper()
		n := count.n.Load()
		st, err := w.State(ctx, topic, prev)
		if err != nil {
			t.Fatal(err)
		}
		return st, count.n.Load() - n
	}
	publish("warm", "w", "running")
	read("warm", nil) // loads the scripts

	publish("small", "a", "running")
	publish("small", "b", "running")
	st, n := read("small", nil)
	if n != 1 || st.Workflows["a"].Status != "running" || st.Workflows["b"].Status != "running" {
		t.Fatalf("first read of 2 workflows: %d commands, %+v; want 1 command and both running", n, st.Workflows)
	}
	publish("small", "a", "failed")
	st2, n := read("small", st)
	if n != 1 || st2.Workflows["a"].Status != "failed" || st2.Workflows["b"].EventID != st.Workflows["b"].EventID {
		t.Fatalf("read after a's new event: %d commands, a %+v; want 1 command and a failed", n, st2.Workflows["a"])
	}
	n0 := count.n.Load()
	sts, err := w.States(ctx, []string{"small", "warm"}, []*workflow.TopicState{st, nil})
	if err != nil || count.n.Load()-n0 != 2 || sts[0].Workflows["a"].Status != "failed" {
		t.Fatalf("States of two small topics: %d commands, %v; want 2 (a scan each)", count.n.Load()-n0, err)
	}

	for i := range scanKnownIDs + 8 {
		publish("big", fmt.Sprintf("w%02d", i), "running")
	}
	big, _ := read("big", nil)
	publish("big", "w03", "succeeded")
	big2, _ := read("big", big)
	fresh, _ := read("big", nil)
	if big2.Workflows["w03"].Status != "succeeded" || !reflect.DeepEqual(big2, fresh) {
		t.Fatalf("read of %d workflows after one changed: w03 %+v; want succeeded, and the same state as a fresh read",
			scanKnownIDs+8, big2.Workflows["w03"])
	}
}
