package pubsub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/hub"
)

// Publishing errors. Validation errors wrap ErrInvalid (or hub.ErrBadTopic / hub.ErrBadType, which also wrap
// nothing else) so callers can answer 400, and ErrTooLarge so they can answer 413.
var (
	ErrInvalid  = errors.New("invalid event")
	ErrTooLarge = errors.New("event too large")
)

// DefaultMaxEventBytes is the largest data accepted when no limit is configured (64 KiB).
const DefaultMaxEventBytes = 64 << 10

// DefaultMaxLen is the stream length kept per topic (MAXLEN ~) when none is configured.
const DefaultMaxLen = 10000

// PublisherConfig tunes a Publisher. Zero values mean the documented defaults.
type PublisherConfig struct {
	Prefix        string
	MaxLen        int64         // history.max_len: stream length kept (approximately), default 10000
	MaxAge        time.Duration // history.max_age: also trim entries older than this; 0 keeps them
	MaxEventBytes int           // limits.max_event_bytes, default 64 KiB
	Sharded       bool          // redis.sharded_pubsub: SPUBLISH, for subscribers that SSUBSCRIBE
}

// Publisher publishes events with the publish script. It is safe for concurrent use.
type Publisher struct {
	rdb    redis.UniversalClient
	keys   Keys
	cfg    PublisherConfig
	script *redis.Script
	now    func() time.Time
}

// NewPublisher returns a Publisher on rdb (a *redis.Client, *redis.ClusterClient or *redis.Ring... any
// redis.UniversalClient).
func NewPublisher(rdb redis.UniversalClient, cfg PublisherConfig) *Publisher {
	if cfg.MaxLen <= 0 {
		cfg.MaxLen = DefaultMaxLen
	}
	if cfg.MaxEventBytes <= 0 {
		cfg.MaxEventBytes = DefaultMaxEventBytes
	}
	script := publishScript
	if cfg.Sharded {
		script = shardedPublishScript
	}
	return &Publisher{rdb: rdb, keys: Keys{Prefix: cfg.Prefix}, cfg: cfg, script: script, now: time.Now}
}

// Validate checks an event as every publisher must: a valid topic and type, data that is one JSON value no larger
// than max bytes. An empty type means hub.DefaultType.
func Validate(topic, eventType string, data []byte, max int) error {
	if err := hub.ValidateTopic(topic); err != nil {
		return err
	}
	if eventType != "" {
		if err := hub.ValidateType(eventType); err != nil {
			return err
		}
	}
	if len(data) > max {
		return fmt.Errorf("%w: data is %d bytes, at most %d", ErrTooLarge, len(data), max)
	}
	if !json.Valid(data) {
		return fmt.Errorf("%w: data is not one valid JSON value", ErrInvalid)
	}
	return nil
}

// Publish validates and publishes one event, returning its stream id. Publishing is at least once: after an error
// the event may or may not have been stored, so a retrying agent should put its own idempotency key in data.
func (p *Publisher) Publish(ctx context.Context, topic, eventType string, data []byte) (string, error) {
	if eventType == "" {
		eventType = hub.DefaultType
	}
	if err := Validate(topic, eventType, data, p.cfg.MaxEventBytes); err != nil {
		return "", err
	}
	id, err := p.script.Run(ctx, p.rdb, p.scriptKeys(topic), p.scriptArgs(topic, eventType, data)...).Text()
	if err != nil {
		return "", fmt.Errorf("publish to %s: %w", topic, err)
	}
	return id, nil
}

func (p *Publisher) scriptKeys(topic string) []string {
	return []string{p.keys.Stream(topic), p.keys.State(topic)}
}

func (p *Publisher) scriptArgs(topic, eventType string, data []byte) []any {
	minID := ""
	if p.cfg.MaxAge > 0 {
		minID = strconv.FormatInt(p.now().Add(-p.cfg.MaxAge).UnixMilli(), 10)
	}
	return []any{p.keys.Channel(topic), eventType, data, p.cfg.MaxLen, p.cfg.MaxEventBytes, minID}
}

// Message is one event of a batch.
type Message struct {
	Topic, Type string
	Data        []byte
}

// PublishBatch publishes several events in one round trip (a pipeline of script calls). Events of one topic are
// stored in the order given. ids[i] is the id of msgs[i], or "" where errs[i] says why it was not published.
func (p *Publisher) PublishBatch(ctx context.Context, msgs []Message) (ids []string, errs []error) {
	ids, errs = make([]string, len(msgs)), make([]error, len(msgs))
	types := make([]string, len(msgs)) // the caller's messages are left as they are
	todo := make([]int, 0, len(msgs))
	for i, m := range msgs {
		if m.Type == "" {
			types[i] = hub.DefaultType
		} else {
			types[i] = m.Type
		}
		if errs[i] = Validate(m.Topic, types[i], m.Data, p.cfg.MaxEventBytes); errs[i] == nil {
			todo = append(todo, i)
		}
	}
	// A script cache emptied by a Redis restart answers NOSCRIPT: load the script and send only those again, so no
	// event is stored twice.
	for attempt := 0; attempt < 2 && len(todo) > 0; attempt++ {
		if attempt > 0 {
			if err := p.script.Load(ctx, p.rdb).Err(); err != nil {
				for _, i := range todo {
					errs[i] = fmt.Errorf("publish to %s: load script: %w", msgs[i].Topic, err)
				}
				return ids, errs
			}
		}
		pipe := p.rdb.Pipeline()
		cmds := make([]*redis.Cmd, len(todo))
		for k, i := range todo {
			m := msgs[i]
			cmds[k] = p.script.EvalSha(ctx, pipe, p.scriptKeys(m.Topic), p.scriptArgs(m.Topic, types[i], m.Data)...)
		}
		_, _ = pipe.Exec(ctx) // each command carries its own error
		again := todo[:0]
		for k, i := range todo {
			id, err := cmds[k].Text()
			switch {
			case err == nil:
				ids[i], errs[i] = id, nil
			case redis.HasErrorPrefix(err, "NOSCRIPT"):
				again = append(again, i)
				errs[i] = fmt.Errorf("publish to %s: %w", msgs[i].Topic, err)
			default:
				errs[i] = fmt.Errorf("publish to %s: %w", msgs[i].Topic, err)
			}
		}
		todo = again
	}
	return ids, errs
}
