package pubsub

import (
	"testing"

	"github.com/syncverse/hub/hub"
)

// progressEnvelope is a typical progress event as the publish script PUBLISHes it, with about 200 bytes of data.
var progressEnvelope = []byte(`{"id":"1733220000000-3","prev":"1733220000000-2","type":"progress","data":` +
	`{"workflow":"wf-1","step":"compile","progress":0.42,"status":"running","agent":"agent-a",` +
	`"message":"compiling github.com/syncverse/hub/pubsub","started":"2026-12-03T12:16:42Z","attempt":1,"tags":["ci","linux"]}}`)

// BenchmarkDecodeLive compares decodeLive with decodeLiveSlow, the encoding/json path it falls back to.
func BenchmarkDecodeLive(b *testing.B) {
	if _, ok := fastEnvelope(progressEnvelope); !ok {
		b.Fatalf("fastEnvelope(%q) does not take the fast path", progressEnvelope)
	}
	for _, d := range []struct {
		name   string
		decode func(string, []byte, int) (*hub.Event, string)
	}{{"progress/slow", decodeLiveSlow}, {"progress/fast", decodeLive}} {
		b.Run(d.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, reason := d.decode("t", progressEnvelope, 64<<10); reason != "" {
					b.Fatalf("%s(%q) dropped it: %s", d.name, progressEnvelope, reason)
				}
			}
		})
	}
}
