// Package demo runs simulated agents that publish workflows on topic demo (hub serve --demo), so a newcomer sees
// the console move. Each agent holds a lease on its project while it works.
package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/syncverse/hub/internal/delay"
	"github.com/syncverse/hub/lease"
	"github.com/syncverse/hub/pubsub"
)

// Topic is where the simulated agents publish.
const Topic = "demo"

var demoJobs = []struct {
	title string
	steps []string
}{
	{"Generate code for project %d", []string{"plan", "generate", "format", "test"}},
	{"Compile service bundle %d", []string{"fetch", "compile", "link", "package"}},
	{"Create schema for project %d", []string{"diff", "migrate", "verify"}},
	{"Deploy CMS content %d", []string{"build", "upload", "invalidate", "smoke-test"}},
}

// Run runs a few simulated agents until ctx ends, so a newcomer sees the console move. Each agent runs one
// workflow at a time through its steps, under a lease on its project (so two agents never work on one project at
// once, and the console's lock panel shows who holds what), and now and then one fails.
func Run(ctx context.Context, pub *pubsub.Publisher, rdb redis.UniversalClient, reg prometheus.Registerer, log zerolog.Logger) {
	metrics := lease.NewMetrics(reg, "hub")
	var wg sync.WaitGroup
	for i := range 4 {
		agent := fmt.Sprintf("agent-%d", i+1)
		locker := lease.New(rdb, lease.Options{
			TTL: 10 * time.Second, Holder: agent, Announcer: pub, Topic: Topic, Metrics: metrics, Logger: log,
		})
		wg.Go(func() {
			defer locker.Close()
			demoAgent(ctx, pub, locker, agent, log)
		})
	}
	wg.Wait()
}

func demoAgent(ctx context.Context, pub *pubsub.Publisher, locker *lease.Locker, agent string, log zerolog.Logger) {
	for ctx.Err() == nil {
		job := demoJobs[rand.IntN(len(demoJobs))]
		project := 40 + rand.IntN(8) // few projects, so agents sometimes wait for each other's lease
		wf := fmt.Sprintf("wf-%s-%04x", agent[len(agent)-1:], rand.IntN(0x10000))
		p := demoProgress{Workflow: wf, Title: fmt.Sprintf(job.title, project), Agent: agent, Status: "queued",
			Message: fmt.Sprintf("waiting for the lease on project-%d", project)}
		if !demoSend(ctx, pub, p, log) {
			return
		}
		ls, err := locker.Acquire(ctx, fmt.Sprintf("project-%d", project), lease.WithWorkflow(wf))
		if err != nil {
			return // ctx ended
		}
		demoRun(ls.Context(), pub, job.steps, p, log)
		if ls.Context().Err() != nil && ctx.Err() == nil { // the lease was lost under the work: stop, and say so
			p.Status, p.Message = "failed", "lease lost: "+context.Cause(ls.Context()).Error()
			demoSend(ctx, pub, p, log)
		}
		_ = ls.Release(context.WithoutCancel(ctx))
		if !delay.Sleep(ctx, time.Duration(1+rand.IntN(3))*time.Second) {
			return
		}
	}
}

// demoRun takes one workflow through its steps while its lease holds (ctx ends when it is lost).
func demoRun(ctx context.Context, pub *pubsub.Publisher, steps []string, p demoProgress, log zerolog.Logger) {
	total := 20 + rand.IntN(20) // ticks of about 1 s: workflows of 20-40 s
	failAt := -1
	if rand.IntN(6) == 0 {
		failAt = rand.IntN(total)
	}
	p.Status = "running"
	for t := 0; t <= total; t++ {
		p.Step = steps[min(t*len(steps)/(total+1), len(steps)-1)]
		p.Progress = float64(t) / float64(total)
		p.ETA = total - t
		p.Message = fmt.Sprintf("%d of %d tasks done", t, total) // the card shows the step and the percentage already
		if t == failAt {
			p.Status, p.Message = "failed", fmt.Sprintf("%s failed: exit status %d", p.Step, 1+rand.IntN(3))
			break
		}
		if !demoSend(ctx, pub, p, log) || !delay.Sleep(ctx, time.Duration(600+rand.IntN(800))*time.Millisecond) {
			return
		}
	}
	if p.Status != "failed" {
		p.Status, p.Message, p.Progress, p.ETA = "succeeded", "done", 1, 0
	}
	demoSend(ctx, pub, p, log)
}

type demoProgress struct {
	Workflow string  `json:"workflow"`
	Title    string  `json:"title"`
	Step     string  `json:"step,omitempty"`
	Progress float64 `json:"progress"`
	Status   string  `json:"status"`
	Message  string  `json:"message,omitempty"`
	Agent    string  `json:"agent"`
	ETA      int     `json:"eta_s,omitempty"`
}

func demoSend(ctx context.Context, pub *pubsub.Publisher, p demoProgress, log zerolog.Logger) bool {
	data, _ := json.Marshal(p)
	if _, err := pub.Publish(ctx, Topic, "progress", data); err != nil && ctx.Err() == nil {
		log.Warn().Err(err).Msg("demo agent could not publish")
	}
	return ctx.Err() == nil
}
