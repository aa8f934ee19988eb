package pubsub

import (
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/syncverse/hub/internal/eventschema"
)

// PublisherConfig.Check, as the hub wires it from docs/schemas: in warn the event is stored and Result.Warnings
// names each problem; in strict it is refused as invalid and nothing is stored; data that matches has no warnings.
func TestPublisherCheckWarnsOrRefuses(t *testing.T) {
	set, err := eventschema.Compile(os.DirFS("../docs/schemas"))
	if err != nil {
		t.Fatal(err)
	}
	b := realBackend(t)
	ctx := ctxFor(t)
	bad, good := []byte(`{"workflow":"wf-1","progress":40}`), []byte(`{"workflow":"wf-1","progress":0.4}`)
	for _, mode := range []eventschema.Mode{eventschema.Warn, eventschema.Strict} {
		topic := "check." + string(mode)
		pub := b.publisher(PublisherConfig{Check: func(_, typ string, data []byte) ([]string, error) {
			return set.Judge(mode, typ, data)
		}})
		res, err := pub.PublishMessage(ctx, Message{Topic: topic, Data: good})
		if err != nil || res.ID == "" || res.Warnings != nil {
			t.Errorf("%s: PublishMessage(good) = %+v, %v; want an id and no warnings", mode, res, err)
		}
		res, err = pub.PublishMessage(ctx, Message{Topic: topic, Data: bad})
		n, _ := b.rdb.XLen(ctx, b.keys.Stream(topic)).Result()
		switch mode {
		case eventschema.Warn:
			if err != nil || res.ID == "" || !slices.Equal(res.Warnings, []string{"progress: 40 is not between 0 and 1"}) || n != 2 {
				t.Errorf("warn: PublishMessage(progress 40) = %+v, %v, XLEN %d; want stored with the problem as a warning", res, err, n)
			}
		case eventschema.Strict:
			var inv *eventschema.Invalid
			if !errors.Is(err, ErrInvalid) || !errors.As(err, &inv) || res.ID != "" || n != 1 {
				t.Errorf("strict: PublishMessage(progress 40) = %+v, %v, XLEN %d; want refused as ErrInvalid, nothing stored", res, err, n)
			}
		}
	}
}
