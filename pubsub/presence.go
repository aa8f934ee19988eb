package pubsub

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/hub"
)

// Presence is a topic's watchers per hub in Redis. The hash P:{T}:presence, in the topic's slot, holds one field per
// hub id whose value is that hub's entry, {"count","users","truncated","until"} (until: a long deadline, in Unix ms,
// that the hub pushes back rarely). Whether a hub is alive is one record per hub, not per entry: the field hub id ->
// deadline (Unix ms) of the hash P:presence:hubs, rewritten every interval. Readers count a field only while its
// hub's record is alive and delete the others, so a hub that died is forgotten within the expiry, whatever the
// number of its entries. It implements hub.PresenceStore.
type Presence struct {
	rdb    redis.UniversalClient
	keys   Keys
	expiry time.Duration
	m      *PresenceMetrics

	mu       sync.Mutex
	extended map[string]time.Time // per topic: how long this hub last made the hash live (its expiry)
	hubsTill time.Time            // when the liveness hash expires, as this hub last set it
	live     map[string]time.Time // the liveness hash as last read: hub id -> deadline
	liveAt   time.Time            // when it was read
}

// NewPresence returns the presence store under prefix; a hub's record lives expiry past its writing. m counts what
// it spends (nil: nowhere).
func NewPresence(rdb redis.UniversalClient, prefix string, expiry time.Duration, m *PresenceMetrics) *Presence {
	if m == nil {
		m = NewPresenceMetrics(nil)
	}
	return &Presence{rdb: rdb, keys: Keys{Prefix: prefix}, expiry: expiry, m: m, extended: map[string]time.Time{}}
}

// hubsKey is the liveness hash: one field per running hub. It has no hash tag, so on a Cluster it sits in a slot of
// its own and is read with its own command.
func (p *Presence) hubsKey() string { return p.keys.prefix() + ":presence:hubs" }

// hubsKeep is how long the liveness hash outlives the last hub that writes it.
const hubsKeep = time.Hour

// liveFor is how long a read of the liveness hash serves readers: at most one read per second per hub.
const liveFor = time.Second

// entryJSON is an entry's value in the hash.
type entryJSON struct {
	Count     int      `json:"count"`
	Users     []string `json:"users,omitempty"`
	Truncated bool     `json:"truncated,omitempty"`
	Until     int64    `json:"until"`
}

// PutPresence writes each entry as its hub's field of its topic's hash (HSET), all in one pipeline. The hash is made
// to live until the entry's deadline (PEXPIRE) when what this hub last gave it has less than three quarters of that
// left, so a hub that re-touches its entries every quarter of their lifetime keeps the hash, and no write of a
// change pays a PEXPIRE.
func (p *Presence) PutPresence(ctx context.Context, entries map[string]hub.PresenceEntry) error {
	now := time.Now()
	extend := map[string]time.Time{}
	pipe := p.rdb.Pipeline()
	p.mu.Lock()
	for topic, e := range entries {
		v, _ := json.Marshal(entryJSON{Count: e.Count, Users: e.Users, Truncated: e.Truncated, Until: e.Deadline.UnixMilli()})
		key := p.keys.Presence(topic)
		pipe.HSet(ctx, key, e.Hub, v)
		if wants := e.Deadline.Sub(now); p.extended[topic].Sub(now) < wants*3/4 {
			pipe.PExpire(ctx, key, wants)
			extend[topic] = e.Deadline
		}
	}
	p.mu.Unlock()
	p.m.commands[cmdHSet].Add(float64(len(entries)))
	p.m.commands[cmdPExpire].Add(float64(len(extend)))
	if _, err := pipe.Exec(ctx); err != nil {
		return err
	}
	p.mu.Lock()
	maps.Copy(p.extended, extend)
	p.mu.Unlock()
	p.m.written.Add(float64(len(entries)))
	for _, e := range entries {
		if e.Truncated {
			p.m.truncated.Inc()
		}
	}
	return nil
}

// DropPresence removes hubID's field (HDEL).
func (p *Presence) DropPresence(ctx context.Context, topic, hubID string) error {
	p.m.commands[cmdHDel].Inc()
	err := p.rdb.HDel(ctx, p.keys.Presence(topic), hubID).Err()
	if err == nil {
		p.mu.Lock()
		delete(p.extended, topic)
		p.mu.Unlock()
	}
	return err
}

// Alive writes hubID's record with its deadline (HSET of the liveness hash, and a PEXPIRE of that hash once in a
// long while). fresh is true when the record was not there: the hub's first, or readers took it for dead and may
// have deleted its entries.
func (p *Presence) Alive(ctx context.Context, hubID string, until time.Time) (fresh bool, err error) {
	now := time.Now()
	pipe := p.rdb.Pipeline()
	added := pipe.HSet(ctx, p.hubsKey(), hubID, until.UnixMilli())
	p.mu.Lock()
	extend := p.hubsTill.Sub(now) < hubsKeep*3/4
	p.mu.Unlock()
	if extend {
		pipe.PExpire(ctx, p.hubsKey(), hubsKeep)
		p.m.commands[cmdPExpire].Inc()
	}
	p.m.commands[cmdHSet].Inc()
	if _, err := pipe.Exec(ctx); err != nil {
		return false, err
	}
	if extend {
		p.mu.Lock()
		p.hubsTill = now.Add(hubsKeep)
		p.mu.Unlock()
	}
	return added.Val() > 0, nil
}

// Gone removes hubID's record (HDEL), as it stops cleanly.
func (p *Presence) Gone(ctx context.Context, hubID string) error {
	p.m.commands[cmdHDel].Inc()
	return p.rdb.HDel(ctx, p.hubsKey(), hubID).Err()
}

// ReadPresence returns topic's entries of live hubs (HGETALL, and the liveness hash: HGETALL at most once a second,
// or when a hub it has not seen yet wrote an entry); fields of a dead hub, past their deadline, or unreadable, are
// deleted (HDEL).
func (p *Presence) ReadPresence(ctx context.Context, topic string) ([]hub.PresenceEntry, error) {
	key := p.keys.Presence(topic)
	p.m.commands[cmdHGetAll].Inc()
	all, err := p.rdb.HGetAll(ctx, key).Result()
	if err != nil {
		return nil, err
	}
	var live []hub.PresenceEntry
	var stale []string
	entries := make([]hub.PresenceEntry, 0, len(all))
	for field, v := range all {
		e, err := decodePresence(field, []byte(v))
		if err != nil {
			stale = append(stale, field)
			continue
		}
		entries = append(entries, e)
	}
	hubs, err := p.hubs(ctx, entries)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	for _, e := range entries {
		if !now.Before(e.Deadline) || !now.Before(hubs[e.Hub]) {
			stale = append(stale, e.Hub)
			continue
		}
		live = append(live, e)
	}
	if len(stale) > 0 {
		p.m.commands[cmdHDel].Inc()
		p.m.expired.Add(float64(len(stale)))
		_ = p.rdb.HDel(ctx, key, stale...).Err() // best effort: the next reader tries again
	}
	return live, nil
}

// hubs returns the hubs' deadlines: the last read of the liveness hash while it is under a second old and knows
// every hub of entries, else a new one.
func (p *Presence) hubs(ctx context.Context, entries []hub.PresenceEntry) (map[string]time.Time, error) {
	now := time.Now()
	p.mu.Lock()
	live, at := p.live, p.liveAt
	p.mu.Unlock()
	known := now.Sub(at) < liveFor
	for _, e := range entries {
		if _, ok := live[e.Hub]; !ok {
			known = false
		}
	}
	if known || len(entries) == 0 {
		return live, nil
	}
	p.m.commands[cmdHGetAll].Inc()
	all, err := p.rdb.HGetAll(ctx, p.hubsKey()).Result()
	if err != nil {
		return nil, err
	}
	live = make(map[string]time.Time, len(all))
	var dead []string
	for id, v := range all {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || now.Sub(time.UnixMilli(ms)) > p.expiry { // dead for an expiry: nobody counts it any more
			dead = append(dead, id)
			continue
		}
		live[id] = time.UnixMilli(ms)
	}
	if len(dead) > 0 {
		p.m.commands[cmdHDel].Inc()
		_ = p.rdb.HDel(ctx, p.hubsKey(), dead...).Err() // best effort
	}
	p.mu.Lock()
	p.live, p.liveAt = live, now
	p.mu.Unlock()
	return live, nil
}

var errBadPresence = errors.New("bad presence entry")

// decodePresence reads one field of the hash, as another hub (or anyone with write access to Redis) wrote it.
func decodePresence(field string, v []byte) (hub.PresenceEntry, error) {
	var e entryJSON
	if err := json.Unmarshal(v, &e); err != nil {
		return hub.PresenceEntry{}, errors.Join(errBadPresence, err)
	}
	if e.Count < 0 || e.Until <= 0 {
		return hub.PresenceEntry{}, errBadPresence
	}
	return hub.PresenceEntry{Hub: field, Count: e.Count, Users: e.Users, Truncated: e.Truncated,
		Deadline: time.UnixMilli(e.Until)}, nil
}

// Presence commands, the label values of hub_presence_redis_commands_total.
const (
	cmdHSet    = "hset"
	cmdPExpire = "pexpire"
	cmdHDel    = "hdel"
	cmdHGetAll = "hgetall"
)

// PresenceMetrics counts what presence costs Redis.
type PresenceMetrics struct {
	written   prometheus.Counter
	truncated prometheus.Counter
	expired   prometheus.Counter
	commands  map[string]prometheus.Counter
}

// NewPresenceMetrics creates the presence metrics and registers them with reg when it is not nil.
func NewPresenceMetrics(reg prometheus.Registerer) *PresenceMetrics {
	cmds := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hub_presence_redis_commands_total",
		Help: "Redis commands spent on presence, by command (hset, pexpire, hdel, hgetall).",
	}, []string{"command"})
	m := &PresenceMetrics{
		written: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hub_presence_entries_written_total",
			Help: "Presence entries this hub wrote to Redis: one per (topic, hub) on a change (debounced), and each again about every 15 minutes.",
		}),
		truncated: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hub_presence_entries_truncated_total",
			Help: "Presence entries written with more users than presence.max_users: the names past it were left out.",
		}),
		expired: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hub_presence_entries_expired_total",
			Help: "Presence entries found whose hub is dead (it stopped without removing them) or past their deadline, and deleted.",
		}),
		commands: map[string]prometheus.Counter{},
	}
	for _, c := range []string{cmdHSet, cmdPExpire, cmdHDel, cmdHGetAll} {
		m.commands[c] = cmds.WithLabelValues(c)
	}
	if reg != nil {
		reg.MustRegister(cmds, m.written, m.truncated, m.expired)
	}
	return m
}
