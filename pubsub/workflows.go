package pubsub

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/workflow"
)

// Fields of a topic's state hash. The publish script writes the first six; the verdict script the marks
// ("<mark>:<workflow>", and "<mark>q:<workflow>" once the mark's notification is queued).
const (
	fieldCursor   = "_cursor"
	fieldWorkflow = "wf:"       // latest progress envelope per workflow
	fieldLock     = "lock:"     // latest lock envelope per key
	fieldStart    = "wfstart:"  // id of a workflow's first event
	fieldWFLock   = "wflock:"   // latest lock envelope per workflow
	fieldFence    = "fence:"    // highest fence seen per key
	fieldFenceLow = "fencelow:" // latest lock envelope per key whose fence was below the highest
	fieldVerdict  = "verdict:"  // latest health envelope per workflow
)

// verdictPrelude records a verdict's mark unless it holds the value already, or the workflow moved on past the
// event the verdict saw (read from the envelope's start, which the publish script writes as {"id":"<id>", so the
// event's data is never decoded); then, asked to, it goes on into the publish script to publish the health event in the
// same step. Being one script, two replicas judging the same occurrence cannot both record it.
//
//	ARGV[10] the mark's field        ARGV[11] its value
//	ARGV[12] the workflow's field    ARGV[13] the event id it must still hold, or ""
//	ARGV[14] "1" to publish ARGV[2..3] as an event
const verdictPrelude = `if redis.call('HGET', KEYS[2], ARGV[10]) == ARGV[11] then return false end
if ARGV[13] ~= '' then
  local cur = redis.call('HGET', KEYS[2], ARGV[12])
  if not cur or string.match(string.sub(cur, 1, 64), '^{"id":"(%d+%-%d+)"') ~= ARGV[13] then return false end
end
redis.call('HSET', KEYS[2], ARGV[10], ARGV[11])
if ARGV[14] ~= '1' then return 'ok' end
`

// reservedCheck is the publish script's refusal of the hub's own event types; the verdict script publishes
// health events, so it drops health from it.
const (
	reservedCheck       = "typ == 'reset' or typ == 'auth-expired' or typ == 'presence' or typ == 'health'"
	reservedCheckHealth = "typ == 'reset' or typ == 'auth-expired' or typ == 'presence'"
)

// verdictScriptFor returns the verdict script for a hub with or without sharded pub/sub.
func verdictScriptFor(sharded bool) string {
	body := PublishScriptFor(sharded)
	if strings.Contains(body, reservedCheck) {
		body = strings.Replace(body, reservedCheck, reservedCheckHealth, 1)
	}
	return verdictPrelude + body
}

var (
	verdictScript        = redis.NewScript(verdictScriptFor(false))
	shardedVerdictScript = redis.NewScript(verdictScriptFor(true))
)

// Workflows is the store's side of the hub's workflow health: it reads topics' states and commits verdicts. It
// implements workflow.Source and is safe for concurrent use.
type Workflows struct {
	pub    *Publisher
	script *redis.Script
}

// NewWorkflows returns the store's workflow side; pub's configuration (prefix, trimming, sharding) applies to the
// health events it publishes.
func NewWorkflows(pub *Publisher) *Workflows {
	s := verdictScript
	if pub.cfg.Sharded {
		s = shardedVerdictScript
	}
	return &Workflows{pub: pub, script: s}
}

var _ workflow.Source = (*Workflows)(nil)

// Topics calls fn with every topic that has a state hash, scanning every master of a cluster.
func (w *Workflows) Topics(ctx context.Context, fn func(string)) error {
	var mu sync.Mutex
	keys := w.pub.keys
	scan := func(ctx context.Context, c *redis.Client) error {
		it := c.ScanType(ctx, 0, keys.prefix()+":{*}:state", 1000, "hash").Iterator()
		for it.Next(ctx) {
			if t, ok := keys.TopicOf(it.Val(), "state"); ok && hub.ValidateTopic(t) == nil {
				mu.Lock()
				fn(t)
				mu.Unlock()
			}
		}
		return it.Err()
	}
	var err error
	switch c := w.pub.rdb.(type) {
	case *redis.Client:
		err = scan(ctx, c)
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, scan)
	default:
		return fmt.Errorf("list states: unsupported client %T", w.pub.rdb)
	}
	if err != nil {
		return fmt.Errorf("list states: %w", err)
	}
	return nil
}

// Cursors returns each topic's state cursor, "" where the state is gone, in one pipeline per 500 topics.
func (w *Workflows) Cursors(ctx context.Context, topics []string) ([]string, error) {
	out := make([]string, 0, len(topics))
	for chunk := range slices.Chunk(topics, 500) {
		pipe := w.pub.rdb.Pipeline()
		cmds := make([]*redis.StringCmd, len(chunk))
		for i, t := range chunk {
			cmds[i] = pipe.HGet(ctx, w.pub.keys.State(t), fieldCursor)
		}
		if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
			return nil, fmt.Errorf("read state cursors: %w", err)
		}
		for _, c := range cmds {
			out = append(out, c.Val())
		}
	}
	return out, nil
}

// Commit runs the verdict script.
func (w *Workflows) Commit(ctx context.Context, c workflow.Commit) (bool, error) {
	typ, data, publish := hub.DefaultType, []byte("null"), "0"
	if c.Event != nil {
		typ, data, publish = workflow.EventType, c.Event, "1"
	}
	expect := ""
	if !c.Expect.IsZero() {
		expect = c.Expect.String()
	}
	keys, args := w.pub.scriptCall(Message{Topic: c.Topic, Type: typ, Data: data}, "")
	args = append(args, "", "", "", // ARGV[7..9], the idempotency record's TTL and publisher and a traceparent: a verdict has none
		markField(c.Mark, c.Workflow), c.Value, fieldWorkflow+c.Workflow, expect, publish)
	res, err := w.script.Run(ctx, w.pub.rdb, keys, args...).Result()
	switch {
	case err == redis.Nil:
		return false, nil
	case err != nil:
		return false, fmt.Errorf("commit %s verdict on %s/%s: %w", c.Mark, c.Topic, c.Workflow, err)
	}
	return res != nil, nil
}

// MarkQueued records that a mark's notification is queued.
func (w *Workflows) MarkQueued(ctx context.Context, topic, wf, mark, value string) error {
	if err := w.pub.rdb.HSet(ctx, w.pub.keys.State(topic), markField(mark+"q", wf), value).Err(); err != nil {
		return fmt.Errorf("mark %s queued on %s/%s: %w", mark, topic, wf, err)
	}
	return nil
}

func markField(mark, wf string) string { return mark + ":" + wf }

// stateEnvelope is the part of a stored envelope the health of a workflow needs.
type stateEnvelope struct {
	ID   string          `json:"id"`
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

type progressData struct {
	Status string  `json:"status"`
	ETA    float64 `json:"eta_s"`
}

func parseProgress(w *workflow.Workflow, v string) {
	var env stateEnvelope
	if json.Unmarshal([]byte(v), &env) != nil || env.Type != workflow.ProgressType {
		return // a script of an earlier version kept other types' envelopes too
	}
	id, err := hub.ParseID(env.ID)
	if err != nil {
		return
	}
	var d progressData
	_ = workflow.DecodeExact(env.Data, &d) // data of another shape has no status
	w.EventID, w.Status = id, d.Status
	if d.ETA > 0 && d.ETA < 1e9 {
		w.ETA = secondsDuration(d.ETA)
	}
}

func parseLock(v string) *workflow.Lock {
	var env stateEnvelope
	if json.Unmarshal([]byte(v), &env) != nil {
		return nil
	}
	id, err := hub.ParseID(env.ID)
	if err != nil {
		return nil
	}
	var l workflow.Lock
	if workflow.DecodeExact(env.Data, &l) != nil || l.Key == "" {
		return nil
	}
	l.EventID = id
	return &l
}

func secondsDuration(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
