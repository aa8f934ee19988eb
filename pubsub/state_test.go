package pubsub

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestStateTrimmedWithHistory (#14 item 8): 30 workflows publish once, then one workflow publishes until the
// stream (max_len 50) holds none of theirs: they leave the state hash, which keeps only what the stream still
// explains.
func TestStateTrimmedWithHistory(t *testing.T) {
	forBackends(t, func(t *testing.T, b *backend) {
		ctx := ctxFor(t)
		pub := b.publisher(PublisherConfig{MaxLen: 50})
		var msgs []Message
		for i := range 30 {
			msgs = append(msgs, Message{Topic: "t", Data: fmt.Appendf(nil, `{"workflow":"old-%d"}`, i)})
		}
		for i := range 200 {
			msgs = append(msgs, Message{Topic: "t", Data: fmt.Appendf(nil, `{"workflow":"hot","seq":%d}`, i)})
		}
		for chunk := range slices.Chunk(msgs, 100) {
			if _, errs := pub.PublishBatch(ctx, chunk); !slices.Equal(errs, make([]error, len(chunk))) {
				t.Fatalf("PublishBatch: %v", errs)
			}
		}
		fields, err := b.rdb.HKeys(ctx, b.keys.State("t")).Result()
		if err != nil {
			t.Fatal(err)
		}
		var wfs, old []string
		for _, f := range fields {
			if strings.HasPrefix(f, "wf:") {
				wfs = append(wfs, f)
			}
			if strings.Contains(f, ":old-") {
				old = append(old, f)
			}
		}
		if len(old) > 0 {
			t.Errorf("state hash holds %d fields of workflows that left the stream (%q...), want none", len(old), old[:min(3, len(old))])
		}
		if !slices.Equal(wfs, []string{"wf:hot"}) {
			t.Errorf("state hash holds %d workflows (%q...), want only wf:hot: the others left the stream", len(wfs), wfs[:min(3, len(wfs))])
		}
		snap, err := b.store().Snapshot(ctx, "t")
		if err != nil || len(snap.Workflows) != 1 || snap.Workflows["hot"] == nil {
			t.Errorf("Snapshot = %d workflows, %v; want hot alone", len(snap.Workflows), err)
		}
	})
}
