package dispatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/syncverse/hub/internal/delay"
	"github.com/syncverse/hub/internal/progress"
	"github.com/syncverse/hub/lease"
)

// execution is one dispatch as it happened. start and end are taken in this process, so they compare exactly.
type execution struct {
	entity     string
	fence      int64
	start, end time.Time
	aborted    bool // the lease ended during the work and the work stopped
	created    bool
	tableErr   bool // TableAlreadyExists
	stale      bool // the fenced write was refused
	release    time.Duration
	releaseErr error
	err        error
}

// runDispatches is the default mode: every dispatch takes its entity's lease, works, then creates the entity's table
// unless it already existed when the work began, which is what the incident's Saga did.
func runDispatches(ctx context.Context, cfg config, stdout io.Writer) error {
	client, err := connect(ctx, cfg.redisURL)
	if err != nil {
		return fmt.Errorf("dispatch-test: %w", err)
	}
	defer client.Close()
	if !cfg.keep {
		defer func() { _ = cleanup(client, cfg.prefix) }()
	}
	events := &eventCounter{}
	locker := lease.New(client, lease.Options{
		TTL: cfg.ttl, RenewEvery: cfg.renewEvery, NoWatchdog: cfg.noWatchdog, MinReplicas: cfg.minReplicas,
		Prefix: cfg.prefix + "lease:", Holder: "dispatch-test", Announcer: events,
	})
	reg := registry{locker: locker, prefix: cfg.prefix, fenced: !cfg.noFence}

	began := time.Now()
	so := newTally(cfg)
	line := progress.Start(cfg.progress, progressEvery, func() string { return so.line(time.Since(began)) })
	execs := make([]execution, cfg.dispatches)
	sem := make(chan struct{}, cfg.concurrency)
	var wg sync.WaitGroup
	for i := range execs {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		entity := "entity-" + strconv.Itoa(i%cfg.entities)
		wg.Go(func() {
			defer func() { <-sem }()
			execs[i] = dispatchOne(ctx, cfg, locker, reg, entity, i, so)
			so.finish(execs[i])
		})
	}
	wg.Wait()
	line.Stop()
	_ = locker.Close()

	rep := summarize(cfg, execs, time.Since(began), events.snapshot())
	if err := rep.print(stdout, cfg.jsonOut); err != nil {
		return fmt.Errorf("dispatch-test: write report: %w", err)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("dispatch-test: interrupted: %w", context.Cause(ctx))
	}
	if len(rep.Violations) > 0 {
		return fmt.Errorf("dispatch-test: %w: %v", ErrInvariant, rep.Violations)
	}
	return nil
}

func dispatchOne(ctx context.Context, cfg config, locker *lease.Locker, reg registry, entity string, i int, so *tally) execution {
	ex := execution{entity: entity}
	ls, err := locker.Acquire(ctx, entity, lease.WithWorkflow("dispatch-"+strconv.Itoa(i)))
	if err != nil {
		ex.err = err
		return ex
	}
	ex.start, ex.fence = time.Now(), ls.Fence()
	so.begin(entity)
	work := ls.Context()

	exists, err := reg.exists(work, entity, ex.fence)
	if err == nil {
		ex.aborted = !delay.Sleep(work, cfg.work) // the work: without a watchdog nothing ends the lease's context
		if !exists && !ex.aborted {
			err = reg.create(work, entity, ex.fence)
			ex.created = err == nil
		}
	}
	ex.end = time.Now()
	so.end(entity)
	switch {
	case errors.Is(err, errTableExists):
		ex.tableErr = true
	case errors.Is(err, lease.ErrStaleFence):
		ex.stale = true
	case err != nil && work.Err() != nil:
		ex.aborted = true
	default:
		ex.err = err
	}

	t := time.Now()
	ex.releaseErr = ls.Release(context.WithoutCancel(ctx))
	ex.release = time.Since(t)
	return ex
}
