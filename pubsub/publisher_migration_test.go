package pubsub

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/internal/keyslot"
	"github.com/syncverse/hub/internal/rig"
)

// migrationRig is a three-master Cluster holding one topic's history, and a publisher on it.
type migrationRig struct {
	cluster *rig.Cluster
	cc      *redis.ClusterClient
	topic   string
	slot    int
}

func newMigrationRig(t *testing.T) migrationRig {
	t.Helper()
	cluster, cc := startCluster(t, time.Second)
	r := migrationRig{cluster: cluster, cc: cc, topic: "project.migrating"}
	r.slot = keyslot.Of(Keys{}.Stream(r.topic))
	// History exists before the migration, so a keyed publish names a key still at the source (the stream) beside one
	// that is not (its new idempotency key): the source answers TRYAGAIN until the keys have moved.
	p := NewPublisher(cc, PublisherConfig{})
	if _, err := p.PublishMessage(context.Background(), Message{Topic: r.topic, Data: []byte(`{"n":0}`), IdempotencyKey: "k-0"}); err != nil {
		t.Fatalf("publish before the migration: %v", err)
	}
	return r
}

// target is a master other than the slot's.
func (r migrationRig) target(t *testing.T) *rig.Redis {
	from, _ := r.cluster.MasterOf(Keys{}.Stream(r.topic))
	for _, m := range r.cluster.Masters() {
		if m != from {
			return m
		}
	}
	t.Fatal("no other master")
	return nil
}

// migrateWhilePublishing holds the topic's slot in migration for hold while a keyed publish runs through it; it
// returns that publish's result and error.
func (r migrationRig) migrateWhilePublishing(t *testing.T, cfg PublisherConfig, hold time.Duration) (Result, error) {
	t.Helper()
	migrated := make(chan error, 1)
	go func() { migrated <- r.cluster.MigrateSlotSlowly(context.Background(), r.slot, r.target(t), hold) }()
	// Publish once the slot is MIGRATING, so the first attempt meets it.
	src, _ := r.cluster.MasterOf(Keys{}.Stream(r.topic))
	rc := redis.NewClient(&redis.Options{Addr: src.Addr})
	defer rc.Close()
	rig.Eventually(t, 10*time.Second, "the slot shown as migrating", func() bool {
		nodes, _ := rc.Do(context.Background(), "CLUSTER", "NODES").Text()
		return strings.Contains(nodes, fmt.Sprintf("[%d->-", r.slot))
	})
	res, err := NewPublisher(r.cc, cfg).PublishMessage(context.Background(), Message{Topic: r.topic, Data: []byte(`{"n":1}`), IdempotencyKey: "k-1"})
	if merr := <-migrated; merr != nil {
		t.Fatalf("migration: %v", merr)
	}
	return res, err
}

// A keyed publish that meets a slot migration longer than the failover budget is retried for as long as the
// migration budget allows and then stored once, on the slot's new master.
func TestKeyedPublishOutlastsASlowSlotMigration(t *testing.T) {
	r := newMigrationRig(t)
	res, err := r.migrateWhilePublishing(t, PublisherConfig{RetryBudget: 500 * time.Millisecond, MigrationRetry: 20 * time.Second}, 3*time.Second)
	if err != nil {
		t.Fatalf("keyed publish during a 3 s migration with a 20 s migration budget: %v", err)
	}
	if res.Duplicate || res.Retries == 0 {
		t.Errorf("result %+v: want a fresh event stored after retries through the migration", res)
	}
	n, err := r.cc.XLen(context.Background(), Keys{}.Stream(r.topic)).Result()
	if err != nil || n != 2 {
		t.Errorf("stream length after the migration = %d (%v), want 2: the event stored once", n, err)
	}
}

// Without the longer budget the same migration outlasts the failover budget, and the error says what happened.
func TestKeyedPublishOutlastedByASlotMigration(t *testing.T) {
	r := newMigrationRig(t)
	_, err := r.migrateWhilePublishing(t, PublisherConfig{RetryBudget: 500 * time.Millisecond, MigrationRetry: -1}, 3*time.Second)
	if !errors.Is(err, ErrSlotMigrating) || !strings.Contains(err.Error(), "TRYAGAIN") {
		t.Fatalf("keyed publish with only a 500 ms budget through a 3 s migration: %v, want ErrSlotMigrating naming TRYAGAIN", err)
	}
}
