// Command agent is a Go agent of the SyncVerse hub: it takes the lease of its entity, so that no other agent runs a
// workflow on it at the same time, and reports the workflow's progress while it works. Lock events (acquired,
// released, lost) go to the same topic, so the console shows who holds what.
//
//	go run ./examples/go/agent -topic project.42 -workflow wf-go-1
//
// HUB_REDIS_URL defaults to the Redis that `go run . --demo` embeds (redis://127.0.0.1:6380/0), as the shell and
// Python examples do, and takes every form the hub does (redis+cluster://, redis+sentinel://); HUB_REDIS_PREFIX
// defaults to hub.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/syncverse/hub/lease"
	"github.com/syncverse/hub/pubsub"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	topic := flag.String("topic", "project.42", "topic to report on")
	workflow := flag.String("workflow", "wf-go-1", "workflow id")
	entity := flag.String("entity", "project-42", "what the workflow changes; one workflow per entity at a time")
	delay := flag.Duration("step-delay", 500*time.Millisecond, "pause between steps (the work)")
	flag.Parse()

	url := os.Getenv("HUB_REDIS_URL")
	if url == "" {
		url = "redis://127.0.0.1:6380/0" // the demo's embedded Redis (redis.embedded_addr)
	}
	prefix := os.Getenv("HUB_REDIS_PREFIX")
	rdb, err := pubsub.NewClient(url)
	if err != nil {
		return err
	}
	defer rdb.Close()
	pub := pubsub.NewPublisher(rdb, pubsub.PublisherConfig{Prefix: prefix})

	locker := lease.New(rdb, lease.Options{TTL: 10 * time.Second, Announcer: pub, Topic: *topic, Prefix: leasePrefix(prefix)})
	defer locker.Close() // publishes the lock events still queued
	ls, err := locker.Acquire(ctx, *entity, lease.WithWorkflow(*workflow))
	if err != nil {
		return fmt.Errorf("acquire %s: %w", *entity, err)
	}
	defer ls.Release(context.WithoutCancel(ctx))

	report := func(ctx context.Context, status, step string, progress float64) (string, error) {
		data, _ := json.Marshal(map[string]any{
			"workflow": *workflow, "title": "table creation", "agent": "go", "status": status, "step": step,
			"progress": progress, "fence": ls.Fence(),
		})
		// The key names this report, so a retry (the Publisher's own, after a failover) cannot store it twice.
		key := fmt.Sprintf("%s/%d/%s/%s", *workflow, ls.Fence(), status, strings.ReplaceAll(step, " ", "_"))
		res, err := pub.PublishMessage(ctx, pubsub.Message{Topic: *topic, Type: "progress", Data: data, IdempotencyKey: key})
		return res.ID, err
	}
	steps := []string{"plan", "create tables", "seed", "verify"}
	// Reports go out under the lease's context: once it is lost, this agent no longer speaks for the workflow.
	if _, err := report(ls.Context(), "running", "start", 0); err != nil {
		return err
	}
	for i, step := range steps {
		select {
		case <-ls.Context().Done():
			// The lease is gone (lost or expired): another agent may hold it now, so stop touching the entity.
			_, _ = report(context.WithoutCancel(ctx), "failed", step, float64(i)/float64(len(steps)))
			return errors.Join(errors.New("lease lost during "+step), context.Cause(ls.Context()))
		case <-time.After(*delay):
		}
		if _, err := report(ls.Context(), "running", step, float64(i+1)/float64(len(steps)+1)); err != nil {
			return err
		}
	}
	id, err := report(ls.Context(), "succeeded", "done", 1)
	if err != nil {
		return err
	}
	fmt.Println(id)
	return nil
}

// leasePrefix keeps lease keys next to the hub's own when a prefix is set.
func leasePrefix(prefix string) string {
	if prefix == "" {
		return ""
	}
	return prefix + ":lease:"
}
