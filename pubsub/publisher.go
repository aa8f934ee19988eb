package pubsub

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/delay"
)

// Defaults of PublisherConfig's zero values.
const (
	DefaultMaxLen         = 10000            // history.max_len: the stream length kept per topic (MAXLEN ~)
	DefaultMaxEventBytes  = 64 << 10         // limits.max_event_bytes
	DefaultIdempotencyTTL = 10 * time.Minute // history.idempotency_ttl
	DefaultRetryBudget    = 5 * time.Second  // redis.publish_retry
	DefaultMigrationRetry = 30 * time.Second // redis.migration_retry
)

// PublisherConfig tunes a Publisher. Zero values mean the documented defaults.
type PublisherConfig struct {
	Prefix         string
	MaxLen         int64         // history.max_len: stream length kept (approximately), default 10000
	MaxAge         time.Duration // history.max_age: also trim entries older than this; 0 keeps them
	MaxEventBytes  int           // limits.max_event_bytes, default 64 KiB
	Sharded        bool          // redis.sharded_pubsub: SPUBLISH, for subscribers that SSUBSCRIBE
	IdempotencyTTL time.Duration // history.idempotency_ttl: how long a key is remembered, default 10 min, at most 24 h
	// RetryBudget (redis.publish_retry, default 5 s) is how long a publish with an idempotency key is retried after
	// a connection error or a failover reply (MOVED, ASK, TRYAGAIN, CLUSTERDOWN, LOADING, READONLY, MASTERDOWN);
	// negative turns retries off. A publish without a key is never retried here: it might be stored twice.
	RetryBudget time.Duration
	// MigrationRetry (redis.migration_retry, default 30 s) is the budget instead while the replies say the topic's
	// slot is being migrated (TRYAGAIN, ASK): moving a busy slot can take longer than a failover, and the slot is
	// served again when it ends. It never shortens RetryBudget; negative turns the longer budget off.
	MigrationRetry time.Duration
	Metrics        *PublishMetrics // nil: counted nowhere
	// Check, when set, holds each event's data to its type's schema once the event is otherwise valid
	// (events.validation): an error refuses the event, warnings are handed back in Result.Warnings and the event
	// is published all the same. The hub sets it from internal/eventschema; nil checks nothing.
	Check func(topic, typ string, data []byte) (warnings []string, err error)
	// Tracer, when not nil, records each run of the publish script as a client span (tracing.enabled); nil costs
	// nothing.
	Tracer trace.Tracer
}

// Publisher publishes events with the publish script. It is safe for concurrent use.
type Publisher struct {
	rdb    redis.UniversalClient
	keys   Keys
	cfg    PublisherConfig
	script *redis.Script
	now    func() time.Time
	m      *PublishMetrics
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
	if cfg.IdempotencyTTL <= 0 {
		cfg.IdempotencyTTL = DefaultIdempotencyTTL
	}
	cfg.IdempotencyTTL = min(cfg.IdempotencyTTL, MaxIdempotencyTTL)
	if cfg.RetryBudget == 0 {
		cfg.RetryBudget = DefaultRetryBudget
	}
	if cfg.MigrationRetry == 0 {
		cfg.MigrationRetry = DefaultMigrationRetry
	}
	m := cfg.Metrics
	if m == nil {
		m = NewPublishMetrics(nil)
	}
	script := publishScript
	if cfg.Sharded {
		script = shardedPublishScript
	}
	return &Publisher{rdb: rdb, keys: Keys{Prefix: cfg.Prefix}, cfg: cfg, script: script, now: time.Now, m: m}
}

// Message is one event to publish.
type Message struct {
	Topic, Type string // an empty Type means hub.DefaultType
	Data        []byte
	// IdempotencyKey, when not empty, makes the publish safe to repeat for history.idempotency_ttl: the first
	// publish with a key stores the event, any later one of the same content with the same key (on the same topic,
	// by the same Publisher name) answers the first event's id and stores nothing; one of other content (type or
	// data) is refused with ErrConflict. With a key, failed attempts are retried within the retry budget.
	IdempotencyKey string
	// Publisher names whose keys these are (the hub gives a token's subject): each publisher's keys are its own, so
	// one cannot answer or shadow another's. Empty is a name too, shared by every publisher that gives none. At most
	// MaxPublisherLen bytes.
	Publisher string
	// TraceParent, when not empty, is the W3C traceparent of the span that publishes the event: it is stored with
	// the event and delivered with it, so the hub's spans and any reader can join the publisher's trace. Empty takes
	// the span context of the publish's context, when it has one. An invalid one is ignored (Result.TraceIgnored);
	// the event is published without.
	TraceParent string
}

// Result is the answer to a publish.
type Result struct {
	ID        string // the event's stream id
	Duplicate bool   // the key had been seen: ID is the first event's, and nothing was stored or delivered now
	Retries   int    // attempts after the first
	// Warnings are what PublisherConfig.Check said of the data in mode warn ("progress: 40 is not between 0 and
	// 1"): the event was published, but the console will show it as invalid.
	Warnings []string
	// TraceIgnored says why Message.TraceParent was not stored (it is not a valid traceparent); nil when it was, or
	// when there was none.
	TraceIgnored error
}

// Publish validates and publishes one event, returning its stream id. Publishing is at least once: after an error
// the event may or may not have been stored; PublishMessage with an IdempotencyKey makes a retry safe.
func (p *Publisher) Publish(ctx context.Context, topic, eventType string, data []byte) (string, error) {
	r, err := p.PublishMessage(ctx, Message{Topic: topic, Type: eventType, Data: data})
	return r.ID, err
}

// PublishMessage validates and publishes one event. With an idempotency key, an attempt that fails on a
// connection error or a failover reply is retried with backoff within the retry budget; the key makes sure that
// an attempt which did store the event before failing is not stored again.
func (p *Publisher) PublishMessage(ctx context.Context, m Message) (Result, error) {
	if m.Type == "" {
		m.Type = hub.DefaultType
	}
	warnings, err := p.validate(m)
	if err != nil {
		p.m.done(Result{}, err)
		return Result{}, err
	}
	tp, ignored := traceParentFor(ctx, m)
	keys, args := p.scriptCall(m, tp)
	res := Result{Warnings: warnings, TraceIgnored: ignored}
	started := p.now()
	for {
		reply, err := p.runScript(ctx, m.Topic, tp, keys, args)
		if err == nil {
			res.ID, res.Duplicate, err = parseReply(reply)
		}
		if err == nil || m.IdempotencyKey == "" || p.cfg.RetryBudget < 0 || !retryable(err) {
			return p.finish(m.Topic, res, started, err)
		}
		wait := backoff(res.Retries)
		if p.now().Sub(started)+wait > p.budget(err) {
			return p.finish(m.Topic, res, started, retriedFor(err, p.now().Sub(started)))
		}
		refreshSlots(p.rdb, err)
		if !delay.Sleep(ctx, wait) {
			return p.finish(m.Topic, res, started, fmt.Errorf("%w (then: %w)", err, ctx.Err()))
		}
		res.Retries++
	}
}

// validate refuses an event the publisher never stores, then holds its data to the schema when Check is set.
func (p *Publisher) validate(m Message) ([]string, error) {
	if err := Validate(m.Topic, m.Type, m.Data, p.cfg.MaxEventBytes); err != nil {
		return nil, err
	}
	if m.IdempotencyKey != "" {
		if len(m.Publisher) > MaxPublisherLen {
			return nil, fmt.Errorf("%w: publisher name is %d bytes, at most %d", ErrInvalid, len(m.Publisher), MaxPublisherLen)
		}
		if err := ValidateKey(m.IdempotencyKey); err != nil {
			return nil, err
		}
	}
	if p.cfg.Check == nil {
		return nil, nil
	}
	warnings, err := p.cfg.Check(m.Topic, m.Type, m.Data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return warnings, nil
}

// finish reports a publish's end to the metrics and wraps its error.
func (p *Publisher) finish(topic string, res Result, started time.Time, err error) (Result, error) {
	if err != nil {
		if r := refusal(err); r != nil {
			err = r
		}
		err = fmt.Errorf("publish to %s: %w", topic, err)
		res.ID, res.Duplicate = "", false
	}
	p.m.done(res, err)
	p.m.took(p.now().Sub(started), err)
	if res.Retries > 0 {
		p.m.retriedFor(p.now().Sub(started), res, err)
	}
	return res, err
}

// scriptCall lays out the script's keys and arguments; tp, the traceparent, is ARGV[9] (with ARGV[7] and ARGV[8]
// given, unread, when there is no idempotency key).
func (p *Publisher) scriptCall(m Message, tp string) (keys []string, args []any) {
	minID := ""
	if p.cfg.MaxAge > 0 {
		minID = strconv.FormatInt(p.now().Add(-p.cfg.MaxAge).UnixMilli(), 10)
	}
	keys = []string{p.keys.Stream(m.Topic), p.keys.State(m.Topic)}
	args = []any{p.keys.Channel(m.Topic), m.Type, m.Data, p.cfg.MaxLen, p.cfg.MaxEventBytes, minID}
	if m.IdempotencyKey != "" {
		keys = append(keys, p.keys.Idempotency(m.Topic, m.Publisher, m.IdempotencyKey))
		args = append(args, p.cfg.IdempotencyTTL.Milliseconds(), m.Publisher)
	} else if tp != "" {
		args = append(args, 0, "")
	}
	if tp != "" {
		args = append(args, tp)
	}
	return keys, args
}

// parseReply reads the script's answer: an id, or {id, duplicate} when it was given a key.
func parseReply(v any) (id string, duplicate bool, err error) {
	switch r := v.(type) {
	case string:
		return r, false, nil
	case []any:
		if len(r) == 2 {
			id, ok1 := r[0].(string)
			dup, ok2 := r[1].(int64)
			if ok1 && ok2 {
				return id, dup == 1, nil
			}
		}
	}
	return "", false, fmt.Errorf("publish script answered %v, want an id or {id, duplicate}", v)
}
