package pubsub

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/hub"
)

// PublishBatch publishes several events in one round trip (a pipeline of script calls). Events of one topic are
// stored in the order given. ids[i] is the id of msgs[i] (for a key seen before, the first event's), or "" where
// errs[i] says why it was not published. A batch is not retried: the caller may send the failed ones again, which is
// safe for those with an idempotency key.
func (p *Publisher) PublishBatch(ctx context.Context, msgs []Message) (ids []string, errs []error) {
	ids, errs = make([]string, len(msgs)), make([]error, len(msgs))
	todo := make([]int, 0, len(msgs))
	for i, m := range msgs {
		if m.Type == "" {
			m.Type = hub.DefaultType
		}
		if _, errs[i] = p.validate(m); errs[i] == nil { // a batch refuses by Check, and keeps no warnings
			todo = append(todo, i)
		} else {
			p.m.done(Result{}, errs[i])
		}
	}
	// A script cache emptied by a Redis restart answers NOSCRIPT: load the script and send only those again, so no
	// event is stored twice.
	for attempt := 0; attempt < 2 && len(todo) > 0; attempt++ {
		if attempt > 0 {
			if err := p.script.Load(ctx, p.rdb).Err(); err != nil {
				for _, i := range todo {
					errs[i] = fmt.Errorf("publish to %s: load script: %w", msgs[i].Topic, err)
					p.m.done(Result{}, errs[i])
				}
				return ids, errs
			}
		}
		todo = p.sendBatch(ctx, msgs, todo, ids, errs, attempt == 1)
	}
	return ids, errs
}

// sendBatch pipelines the script for msgs[todo] and returns those that answered NOSCRIPT (counted only when last).
func (p *Publisher) sendBatch(ctx context.Context, msgs []Message, todo []int, ids []string, errs []error, last bool) []int {
	pipe := p.rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(todo))
	for k, i := range todo {
		m := msgs[i]
		if m.Type == "" {
			m.Type = hub.DefaultType
		}
		tp, _ := traceParentFor(ctx, m) // an invalid one is dropped here as in PublishMessage
		keys, args := p.scriptCall(m, tp)
		cmds[k] = p.script.EvalSha(ctx, pipe, keys, args...)
	}
	_, _ = pipe.Exec(ctx) // each command carries its own error
	again := todo[:0]
	for k, i := range todo {
		var res Result
		reply, err := cmds[k].Result()
		if err == nil {
			res.ID, res.Duplicate, err = parseReply(reply)
		}
		if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") && !last {
			again = append(again, i)
			continue
		}
		if err != nil {
			if r := refusal(err); r != nil {
				err = r
			}
			err = fmt.Errorf("publish to %s: %w", msgs[i].Topic, err)
		}
		ids[i], errs[i] = res.ID, err
		p.m.done(res, err)
	}
	return again
}
