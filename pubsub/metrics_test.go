package pubsub

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/syncverse/hub/internal/rig"
)

// Every drop reason and both publish outcomes are series from the start, at zero, so a dashboard shows 0 rather
// than "No data" on a fresh hub; a publish is then timed under its outcome.
func TestMetricsExistFromStartAndPublishIsTimed(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		reg := prometheus.NewRegistry()
		NewSubscriber(b.rdb, SubscriberConfig{Prefix: b.prefix, Registerer: reg})
		pub := b.publisher(PublisherConfig{Metrics: NewPublishMetrics(reg)})
		if n, err := seriesCount(reg, "hub_events_dropped_total"); err != nil || n != len(dropReasons) {
			t.Errorf("hub_events_dropped_total on a fresh registry: %d series, %v; want %d (one per reason)", n, err, len(dropReasons))
		}
		if n, err := seriesCount(reg, "hub_publish_duration_seconds"); err != nil || n != 2 {
			t.Errorf("hub_publish_duration_seconds on a fresh registry: %d series, %v; want 2 (ok, error)", n, err)
		}
		if _, err := pub.Publish(ctx, "m", "", []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
		if _, err := pub.Publish(ctx, "m", "", []byte(`not json`)); err == nil {
			t.Fatal("Publish(not json) = nil, want an error")
		}
		b.rdb.Close() // every later round trip fails
		if _, err := pub.Publish(ctx, "m", "", []byte(`{}`)); err == nil {
			t.Fatal("Publish on a closed client = nil, want an error")
		}
		// the invalid event is not timed
		rig.WantByLabel(t, rig.Gather(t, reg), "hub_publish_duration_seconds", "outcome", map[string]float64{"ok": 1, "error": 1})
	})
}

func seriesCount(reg *prometheus.Registry, name string) (int, error) {
	fams, err := reg.Gather()
	for _, f := range fams {
		if f.GetName() == name {
			return len(f.Metric), err
		}
	}
	return 0, err
}
