package pubsub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/notify"
)

// outboxGroup is the consumer group the replicas share.
const outboxGroup = "notify"

// The outbox's keys share the hash tag {notify}, so every script on them runs in one Cluster slot:
//
//	<prefix>:{notify}:outbox     stream of deliveries waiting or being sent (field d: the delivery as JSON)
//	<prefix>:{notify}:retry      sorted set of deliveries waiting for their next try, by its time in ms
//	<prefix>:{notify}:dead       stream of deliveries given up (fields d, reason), the newest 10,000
//	<prefix>:{notify}:seen:<id>  a delivery id queued in the last week, so that it is queued once
var (
	outboxAdd = redis.NewScript(`if redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[2]) then
  redis.call('XADD', KEYS[1], '*', 'd', ARGV[1])
end
return 1`)
	outboxLater = redis.NewScript(`redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
return 1`)
	outboxDead = redis.NewScript(`redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
redis.call('XADD', KEYS[2], 'MAXLEN', '~', 10000, '*', 'd', ARGV[3], 'reason', ARGV[4])
return 1`)
	outboxDue = redis.NewScript(`local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, 100)
for _, d in ipairs(due) do
  redis.call('XADD', KEYS[1], '*', 'd', d)
  redis.call('ZREM', KEYS[2], d)
end
return #due`)
)

// seenFor is how long a delivery id is remembered against a second queuing.
const seenFor = 7 * 24 * time.Hour

// Outbox keeps the webhook deliveries in Redis for every replica. It implements notify.Outbox.
type Outbox struct {
	rdb   redis.UniversalClient
	base  string
	group atomic.Bool // the consumer group is known to exist
}

// NewOutbox returns the outbox under prefix ("" for the default).
func NewOutbox(rdb redis.UniversalClient, prefix string) *Outbox {
	return &Outbox{rdb: rdb, base: Keys{Prefix: prefix}.prefix() + ":{notify}:"}
}

var _ notify.Outbox = (*Outbox)(nil)

func (o *Outbox) key(name string) string { return o.base + name }

// Add queues each delivery once per id.
func (o *Outbox) Add(ctx context.Context, ds []notify.Delivery) error {
	for _, d := range ds {
		b, err := json.Marshal(d)
		if err != nil {
			return fmt.Errorf("queue delivery %s: %w", d.ID, err)
		}
		err = outboxAdd.Run(ctx, o.rdb, []string{o.key("outbox"), o.key("seen:" + d.ID)}, b,
			int64(seenFor/time.Second)).Err()
		if err != nil {
			return fmt.Errorf("queue delivery %s: %w", d.ID, err)
		}
	}
	return nil
}

// ensureGroup creates the consumer group once, reading the outbox from its start.
func (o *Outbox) ensureGroup(ctx context.Context) error {
	if o.group.Load() {
		return nil
	}
	err := o.rdb.XGroupCreateMkStream(ctx, o.key("outbox"), outboxGroup, "0").Err()
	if err != nil && !redis.HasErrorPrefix(err, "BUSYGROUP") {
		return fmt.Errorf("create outbox group: %w", err)
	}
	o.group.Store(true)
	return nil
}

// Claim takes abandoned deliveries first, then new ones.
func (o *Outbox) Claim(ctx context.Context, consumer string, n int, idle, block time.Duration) ([]notify.Claimed, error) {
	if err := o.ensureGroup(ctx); err != nil {
		return nil, err
	}
	msgs, _, err := o.rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: o.key("outbox"), Group: outboxGroup,
		Consumer: consumer, MinIdle: idle, Start: "0-0", Count: int64(n)}).Result()
	if err != nil {
		if redis.HasErrorPrefix(err, "NOGROUP") { // the outbox was deleted, or Redis lost it
			o.group.Store(false)
		}
		return nil, fmt.Errorf("claim abandoned deliveries: %w", err)
	}
	if len(msgs) == 0 {
		streams, err := o.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: outboxGroup, Consumer: consumer,
			Streams: []string{o.key("outbox"), ">"}, Count: int64(n), Block: block}).Result()
		switch {
		case errors.Is(err, redis.Nil):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("read deliveries: %w", err)
		}
		for _, s := range streams {
			msgs = append(msgs, s.Messages...)
		}
	}
	out := make([]notify.Claimed, 0, len(msgs))
	for _, m := range msgs {
		c := notify.Claimed{Ref: m.ID}
		raw, _ := m.Values["d"].(string)
		if err := json.Unmarshal([]byte(raw), &c.Delivery); err != nil || c.ID == "" {
			// Not a delivery this hub wrote: keep it for an operator rather than retrying it for ever.
			_ = o.Dead(ctx, c, "unreadable delivery")
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

// Done acknowledges and removes a delivered one.
func (o *Outbox) Done(ctx context.Context, c notify.Claimed) error {
	pipe := o.rdb.TxPipeline()
	pipe.XAck(ctx, o.key("outbox"), outboxGroup, c.Ref)
	pipe.XDel(ctx, o.key("outbox"), c.Ref)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("finish delivery %s: %w", c.ID, err)
	}
	return nil
}

// Later finishes this try and schedules the next.
func (o *Outbox) Later(ctx context.Context, c notify.Claimed, at time.Time) error {
	b, err := json.Marshal(c.Delivery)
	if err == nil {
		err = outboxLater.Run(ctx, o.rdb, []string{o.key("outbox"), o.key("retry")},
			outboxGroup, c.Ref, at.UnixMilli(), b).Err()
	}
	if err != nil {
		return fmt.Errorf("schedule delivery %s: %w", c.ID, err)
	}
	return nil
}

// Dead gives a delivery up, keeping it among the dead letters.
func (o *Outbox) Dead(ctx context.Context, c notify.Claimed, reason string) error {
	b, err := json.Marshal(c.Delivery)
	if err == nil {
		err = outboxDead.Run(ctx, o.rdb, []string{o.key("outbox"), o.key("dead")}, outboxGroup, c.Ref, b, reason).Err()
	}
	if err != nil {
		return fmt.Errorf("dead-letter delivery %s: %w", c.ID, err)
	}
	return nil
}

// Due moves up to 100 deliveries whose time came back into the queue.
func (o *Outbox) Due(ctx context.Context, now time.Time) error {
	err := outboxDue.Run(ctx, o.rdb, []string{o.key("outbox"), o.key("retry")}, strconv.FormatInt(now.UnixMilli(), 10)).Err()
	if err != nil {
		return fmt.Errorf("requeue due deliveries: %w", err)
	}
	return nil
}

// Pending counts what waits in the queue or for a retry.
func (o *Outbox) Pending(ctx context.Context) (int64, error) {
	pipe := o.rdb.Pipeline()
	n := pipe.XLen(ctx, o.key("outbox"))
	r := pipe.ZCard(ctx, o.key("retry"))
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, fmt.Errorf("count pending deliveries: %w", err)
	}
	return n.Val() + r.Val(), nil
}

// DeadLetters returns the newest n given-up deliveries with their reasons, newest first.
func (o *Outbox) DeadLetters(ctx context.Context, n int64) ([]redis.XMessage, error) {
	return o.rdb.XRevRangeN(ctx, o.key("dead"), "+", "-", n).Result()
}
