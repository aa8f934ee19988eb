package pubsub

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Lock keys whose lock events all left the stream leave the state hash with every field they had: the latest lock
// envelope (lock:), the holder workflow's (wflock:), the highest fence (fence:) and the stale-fence envelope
// (fencelow:). A key still in the stream keeps its fence.
func TestLockStateTrimmedWithHistory(t *testing.T) {
	b := realBackend(t)
	ctx := ctxFor(t)
	pub := b.publisher(PublisherConfig{MaxLen: 50})
	var msgs []Message
	lock := func(key, holder, wf string, fence int, state string) Message {
		return Message{Topic: "t", Type: "lock", Data: fmt.Appendf(nil,
			`{"key":%q,"holder":%q,"fence":%d,"state":%q,"ttl_ms":30000,"workflow":%q}`, key, holder, fence, state, wf)}
	}
	for i := range 20 {
		key := fmt.Sprintf("gone-%d", i)
		msgs = append(msgs,
			lock(key, "a", fmt.Sprintf("gone-wf-a%d", i), 10, "acquired"),
			// a lower fence than the key's highest: fencelow:<key>
			lock(key, "b", fmt.Sprintf("gone-wf-b%d", i), 9, "renewed"))
	}
	for i := range 200 {
		msgs = append(msgs, lock("live", "c", "live-wf", 100+i, "renewed"))
	}
	for chunk := range slices.Chunk(msgs, 100) {
		publishBatch(t, ctx, pub, chunk)
	}
	h := b.state(t, "t")
	var left []string
	for f := range h {
		if strings.Contains(f, "gone-") {
			left = append(left, f)
		}
	}
	slices.Sort(left)
	if len(left) > 0 {
		t.Errorf("state hash holds %d fields of lock keys whose events left the stream, want none: %q", len(left), left)
	}
	if h["fence:live"] != "299" || h["lock:live"] == "" || h["wflock:live-wf"] == "" {
		t.Errorf("state of the key still in the stream: fence %q, lock %q, wflock %q; want fence 299 and both envelopes",
			h["fence:live"], h["lock:live"], h["wflock:live-wf"])
	}
}
