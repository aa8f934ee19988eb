package pubsub

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestStateTrimmedWithHistory (#14 item 8): 30 workflows publish once, then one workflow publishes until the
// stream (max_len 50) holds none of theirs: they leave the state hash, which keeps only what the stream still
// explains.
func TestStateTrimmedWithHistory(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		pub := b.publisher(PublisherConfig{MaxLen: 50})
		msgs := append(messages("t", `{"workflow":"old-%d"}`, 30), messages("t", `{"workflow":"hot","seq":%d}`, 200)...)
		for chunk := range slices.Chunk(msgs, 100) {
			publishBatch(t, ctx, pub, chunk)
		}
		var wfs, old []string
		for f := range b.state(t, "t") {
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
