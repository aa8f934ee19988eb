package pubsub

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/hub"
)

// Presence is a topic's watchers per hub in Redis: the hash P:{T}:presence, in the topic's slot, holds one field per
// hub id whose value is that hub's entry, {"count","users","truncated","until"} (until: the deadline, in Unix ms).
// Readers ignore and delete fields past their deadline, so a hub that died is forgotten within the expiry; the hash
// itself expires when no hub refreshes it. It implements hub.PresenceStore.
type Presence struct {
	rdb    redis.UniversalClient
	keys   Keys
	expiry time.Duration
	m      *PresenceMetrics

	mu       sync.Mutex
	extended map[string]time.Time // per topic: when this hub last pushed the hash's expiry back
}

// NewPresence returns the presence store under prefix; an entry lives expiry past its writing. m counts what it
// spends (nil: nowhere).
func NewPresence(rdb redis.UniversalClient, prefix string, expiry time.Duration, m *PresenceMetrics) *Presence {
	if m == nil {
		m = NewPresenceMetrics(nil)
	}
	return &Presence{rdb: rdb, keys: Keys{Prefix: prefix}, expiry: expiry, m: m, extended: map[string]time.Time{}}
}

// entryJSON is an entry's value in the hash.
type entryJSON struct {
	Count     int      `json:"count"`
	Users     []string `json:"users,omitempty"`
	Truncated bool     `json:"truncated,omitempty"`
	Until     int64    `json:"until"`
}

// PutPresence writes each entry as its hub's field of its topic's hash (HSET), all in one pipeline. A hash's own
// expiry is pushed back to four entry expiries only when this hub last pushed it back three expiries ago or more
// (PEXPIRE), which keeps it past every live entry's deadline for a ninth of the HSETs with the default timers.
func (p *Presence) PutPresence(ctx context.Context, entries map[string]hub.PresenceEntry) error {
	now := time.Now()
	var extend []string
	pipe := p.rdb.Pipeline()
	p.mu.Lock()
	for topic, e := range entries {
		v, _ := json.Marshal(entryJSON{Count: e.Count, Users: e.Users, Truncated: e.Truncated, Until: e.Deadline.UnixMilli()})
		key := p.keys.Presence(topic)
		pipe.HSet(ctx, key, e.Hub, v)
		if now.Sub(p.extended[topic]) >= 3*p.expiry {
			pipe.PExpire(ctx, key, 4*p.expiry)
			extend = append(extend, topic)
		}
	}
	p.mu.Unlock()
	p.m.commands[cmdHSet].Add(float64(len(entries)))
	p.m.commands[cmdPExpire].Add(float64(len(extend)))
	if _, err := pipe.Exec(ctx); err != nil {
		return err
	}
	p.mu.Lock()
	for _, t := range extend {
		p.extended[t] = now
	}
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

// ReadPresence returns topic's live entries (HGETALL); fields past their deadline, or unreadable, are deleted (HDEL).
func (p *Presence) ReadPresence(ctx context.Context, topic string) ([]hub.PresenceEntry, error) {
	key := p.keys.Presence(topic)
	p.m.commands[cmdHGetAll].Inc()
	all, err := p.rdb.HGetAll(ctx, key).Result()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	var live []hub.PresenceEntry
	var stale []string
	for field, v := range all {
		e, err := decodePresence(field, []byte(v))
		if err != nil || !now.Before(e.Deadline) {
			stale = append(stale, field)
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
			Help: "Presence entries this hub wrote to Redis: one per (topic, hub) on a change (debounced) and every presence.interval.",
		}),
		truncated: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hub_presence_entries_truncated_total",
			Help: "Presence entries written with more users than presence.max_users: the names past it were left out.",
		}),
		expired: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hub_presence_entries_expired_total",
			Help: "Presence entries found past their deadline (a hub that stopped without removing them) and deleted.",
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
