package pubsub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
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
//	<prefix>:{notify}:wait:<webhook>|<kind>|<topic>  the id of the one delivery of that kind and topic waiting or
//	                             being sent; the ones queued meanwhile are folded, into
//	<prefix>:{notify}:fold:<webhook>|<kind>|<topic>  a hash: n (how many were folded), w:<workflow> per workflow,
//	                             d and id (the latest folded delivery, queued in its place when the one sent ends)
//
// So one topic's burst takes one place in the queue and one sender at a time, whatever its size.
var (
	// outboxAdd returns 1 queued, 2 folded into the waiting one, 3 dropped (the outbox full), 0 seen before.
	outboxAdd = redis.NewScript(`if not redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[2]) then return 0 end
if redis.call('EXISTS', KEYS[3]) == 1 then
  redis.call('HINCRBY', KEYS[4], 'n', 1)
  if redis.call('HLEN', KEYS[4]) <= tonumber(ARGV[5]) then
    redis.call('HSETNX', KEYS[4], 'w:' .. ARGV[4], '1')
  end
  redis.call('HSET', KEYS[4], 'd', ARGV[1], 'id', ARGV[6])
  redis.call('EXPIRE', KEYS[4], ARGV[7])
  return 2
end
if redis.call('XLEN', KEYS[1]) + redis.call('ZCARD', KEYS[5]) >= tonumber(ARGV[3]) then return 3 end
redis.call('XADD', KEYS[1], '*', 'd', ARGV[1])
redis.call('SET', KEYS[3], ARGV[6], 'EX', ARGV[7])
redis.call('DEL', KEYS[4])
return 1`)
	// outboxTake returns, and clears, what was folded into a claimed delivery while it waited.
	outboxTake = redis.NewScript(`if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {} end
local h = redis.call('HGETALL', KEYS[2])
redis.call('DEL', KEYS[2])
return h`)
	// release (the end of Done, Later and Dead) ends a delivery's turn in its group: what was folded meanwhile is
	// queued as one delivery (its count kept for the claim), or the group is free. KEYS[4] wait, KEYS[5] fold,
	// ARGV[3] the delivery's id, ARGV[6] the folding time.
	release = `
if redis.call('GET', KEYS[4]) == ARGV[3] then
  local d = redis.call('HGET', KEYS[5], 'd')
  if d then
    local nid = redis.call('HGET', KEYS[5], 'id')
    redis.call('HDEL', KEYS[5], 'd', 'id')
    redis.call('HINCRBY', KEYS[5], 'n', -1)
    redis.call('XADD', KEYS[1], '*', 'd', d)
    redis.call('SET', KEYS[4], nid, 'EX', ARGV[6])
  else
    redis.call('DEL', KEYS[4])
  end
end`
	// KEYS outbox, retry, dead, wait, fold; ARGV group, ref, id, d, reason or at, folding time, limit.
	outboxDone = redis.NewScript(`redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])` + release + `
return 1`)
	// outboxLater returns 0, dead-lettering the delivery, when the retry set holds ARGV[7] already.
	outboxLater = redis.NewScript(`redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])` + release + `
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[7]) then
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', 10000, '*', 'd', ARGV[4], 'reason', 'the retry set is full')
  return 0
end
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[4])
return 1`)
	outboxDead = redis.NewScript(`redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])` + release + `
redis.call('XADD', KEYS[3], 'MAXLEN', '~', 10000, '*', 'd', ARGV[4], 'reason', ARGV[5])
return 1`)
	outboxDue = redis.NewScript(`local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, 100)
for _, d in ipairs(due) do
  redis.call('XADD', KEYS[1], '*', 'd', d)
  redis.call('ZREM', KEYS[2], d)
end
return #due`)
)

// seenFor is how long a delivery id is remembered against a second queuing; waitFor how long deliveries are folded
// into one that is not claimed; maxFolded how many workflows a folded delivery names.
const (
	seenFor   = 7 * 24 * time.Hour
	waitFor   = time.Hour
	maxFolded = 50
)

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

// Add queues each delivery once per id, folding it into a waiting one of its webhook, kind and topic, or dropping it
// when the outbox and the retry set hold limit deliveries.
func (o *Outbox) Add(ctx context.Context, ds []notify.Delivery, limit int) (notify.Added, error) {
	var added notify.Added
	for _, d := range ds {
		b, err := json.Marshal(d)
		if err != nil {
			return added, fmt.Errorf("queue delivery %s: %w", d.ID, err)
		}
		group := foldGroup(d)
		res, err := outboxAdd.Run(ctx, o.rdb, []string{o.key("outbox"), o.key("seen:" + d.ID), o.key("wait:" + group),
			o.key("fold:" + group), o.key("retry")}, b, int64(seenFor/time.Second), limit, d.Notification.Workflow,
			maxFolded, d.ID, int64(waitFor/time.Second)).Int()
		if err != nil {
			return added, fmt.Errorf("queue delivery %s: %w", d.ID, err)
		}
		switch res {
		case 1:
			added.Queued++
		case 2:
			added.Coalesced++
		case 3:
			added.Dropped++
		}
	}
	return added, nil
}

func foldGroup(d notify.Delivery) string {
	return d.Webhook + "|" + d.Notification.Kind + "|" + d.Notification.Topic
}

// take ends the folding into a claimed delivery and adds what was folded into it to its notification.
func (o *Outbox) take(ctx context.Context, c *notify.Claimed) error {
	group := foldGroup(c.Delivery)
	h, err := outboxTake.Run(ctx, o.rdb, []string{o.key("wait:" + group), o.key("fold:" + group)}, c.ID).StringSlice()
	if err != nil {
		return fmt.Errorf("take folded deliveries of %s: %w", c.ID, err)
	}
	n := &c.Notification
	for i := 0; i+1 < len(h); i += 2 {
		switch k := h[i]; {
		case k == "n":
			folded, _ := strconv.Atoi(h[i+1])
			n.Coalesced = max(n.Coalesced, 1) + folded
		case strings.HasPrefix(k, "w:") && len(k) > 2:
			if !slices.Contains(n.Workflows, k[2:]) {
				n.Workflows = append(n.Workflows, k[2:])
			}
		}
	}
	if n.Coalesced > 1 && !slices.Contains(n.Workflows, n.Workflow) {
		n.Workflows = append([]string{n.Workflow}, n.Workflows...)
	}
	slices.Sort(n.Workflows)
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
		if err := o.take(ctx, &c); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// Done acknowledges and removes a delivered one.
func (o *Outbox) Done(ctx context.Context, c notify.Claimed) error {
	if _, err := o.finish(ctx, outboxDone, c, nil, "", 0); err != nil {
		return fmt.Errorf("finish delivery %s: %w", c.ID, err)
	}
	return nil
}

// Later finishes this try and schedules the next, or dead-letters the delivery when the retry set holds limit.
func (o *Outbox) Later(ctx context.Context, c notify.Claimed, at time.Time, limit int) (bool, error) {
	b, err := json.Marshal(c.Delivery)
	res := 0
	if err == nil {
		res, err = o.finish(ctx, outboxLater, c, b, strconv.FormatInt(at.UnixMilli(), 10), limit)
	}
	if err != nil {
		return false, fmt.Errorf("schedule delivery %s: %w", c.ID, err)
	}
	return res == 1, nil
}

// Dead gives a delivery up, keeping it among the dead letters.
func (o *Outbox) Dead(ctx context.Context, c notify.Claimed, reason string) error {
	b, err := json.Marshal(c.Delivery)
	if err == nil {
		_, err = o.finish(ctx, outboxDead, c, b, reason, 0)
	}
	if err != nil {
		return fmt.Errorf("dead-letter delivery %s: %w", c.ID, err)
	}
	return nil
}

// finish runs one of the scripts that end a try, each releasing the delivery's group.
func (o *Outbox) finish(ctx context.Context, s *redis.Script, c notify.Claimed, d []byte, arg string, limit int) (int, error) {
	group := foldGroup(c.Delivery)
	return s.Run(ctx, o.rdb, []string{o.key("outbox"), o.key("retry"), o.key("dead"), o.key("wait:" + group),
		o.key("fold:" + group)}, outboxGroup, c.Ref, c.ID, d, arg, int64(waitFor/time.Second), limit).Int()
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
