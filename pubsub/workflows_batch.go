package pubsub

import (
	"context"
	"fmt"
	"slices"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/workflow"
)

// States reads several topics' states as State does, in a few round trips instead of two or more per topic: each
// round of scans goes in one pipeline, then every fetch in another. Each command still reads at most stateScanCount
// fields or decodes stateFetchCount envelopes; only the round trips are shared. prevs[i] is topics[i]'s last read.
func (w *Workflows) States(ctx context.Context, topics []string, prevs []*workflow.TopicState) ([]*workflow.TopicState, error) {
	out := make([]*workflow.TopicState, len(topics))
	if len(topics) == 1 {
		st, err := w.State(ctx, topics[0], prevs[0])
		out[0] = st
		return out, err
	}
	keys := make([]string, len(topics))
	for i, t := range topics {
		keys[i] = w.pub.keys.State(t)
	}
	fields, err := w.scanStates(ctx, keys, prevs)
	if err == nil {
		for i, t := range topics {
			out[i] = buildState(t, fields[i], prevs[i])
			applyScanned(out[i], fields[i])
		}
		err = w.fetchStates(ctx, keys, out, fields)
	}
	if redis.HasErrorPrefix(err, "NOSCRIPT") {
		// Redis lost the scripts (a restart, a failover to a replica that never ran them): State loads them.
		for i, t := range topics {
			if out[i], err = w.State(ctx, t, prevs[i]); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the states of %d topics: %w", len(topics), err)
	}
	for _, st := range out {
		pruneEmpty(st)
	}
	return out, nil
}

// scanStates scans every key's hash, one pipeline per round: a round asks each unfinished scan for its next page.
func (w *Workflows) scanStates(ctx context.Context, keys []string, prevs []*workflow.TopicState) ([]map[string]scanned, error) {
	fields := make([]map[string]scanned, len(keys))
	cursors := make([]string, len(keys))
	pending := make([]int, len(keys))
	for i := range keys {
		fields[i], cursors[i], pending[i] = map[string]scanned{}, "0", i
	}
	for len(pending) > 0 {
		pipe := w.pub.rdb.Pipeline()
		cmds := make([]*redis.Cmd, len(pending))
		for j, i := range pending {
			cmds[j] = stateScan.EvalSha(ctx, pipe, []string{keys[i]}, scanArgs(cursors[i], prevs[i])...)
		}
		_, _ = pipe.Exec(ctx) // each command's own error is read below
		next := pending[:0]
		for j, i := range pending {
			res, err := cmds[j].Slice()
			if err != nil {
				return nil, err
			}
			if cursors[i] = addScanned(fields[i], res); cursors[i] != "0" && cursors[i] != "" {
				next = append(next, i)
			}
		}
		pending = next
	}
	return fields, nil
}

// fetchStates fetches, in one pipeline, the envelopes each state could not take from its last read.
func (w *Workflows) fetchStates(ctx context.Context, keys []string, sts []*workflow.TopicState, fields []map[string]scanned) error {
	type fetch struct {
		st    *workflow.TopicState
		chunk []any
		cmd   *redis.Cmd
	}
	var fetches []fetch
	pipe := w.pub.rdb.Pipeline()
	for i, st := range sts {
		for chunk := range slices.Chunk(toFetch(st, fields[i]), stateFetchCount) {
			fetches = append(fetches, fetch{st, chunk, stateFetch.EvalSha(ctx, pipe, []string{keys[i]}, chunk...)})
		}
	}
	if len(fetches) == 0 {
		return nil
	}
	_, _ = pipe.Exec(ctx)
	for _, f := range fetches {
		vals, err := f.cmd.StringSlice()
		if err != nil {
			return err
		}
		applyEnvelopes(f.st, f.chunk, vals)
	}
	return nil
}
