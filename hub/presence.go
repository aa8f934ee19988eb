package hub

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// PresenceEntry is one hub's account of a topic's watchers: what it writes to the store, one per (topic, hub).
type PresenceEntry struct {
	Hub       string    `json:"-"`
	Count     int       `json:"count"`
	Users     []string  `json:"users,omitempty"`
	Truncated bool      `json:"truncated,omitempty"`
	Deadline  time.Time `json:"-"` // past it the entry is ignored: its hub stopped re-touching it
}

// PresenceStore keeps every hub's entries (Redis, owned by package pubsub). Its methods are safe for concurrent use.
type PresenceStore interface {
	// PutPresence writes each entry (by topic) as its hub's, in one round trip.
	PutPresence(ctx context.Context, entries map[string]PresenceEntry) error
	// DropPresence removes hubID's entry for topic.
	DropPresence(ctx context.Context, topic, hubID string) error
	// ReadPresence returns topic's entries of live hubs whose deadline has not passed (and may delete the others).
	ReadPresence(ctx context.Context, topic string) ([]PresenceEntry, error)
	// Alive records that hubID lives until the deadline: one write whatever its number of entries. fresh reports
	// that there was no record of it (its first, or readers took it for dead and may have deleted its entries).
	Alive(ctx context.Context, hubID string, until time.Time) (fresh bool, err error)
	// Gone removes hubID's record, as it stops.
	Gone(ctx context.Context, hubID string) error
}

// The defaults of PresenceConfig, exported so the hub's configuration reads them instead of writing them again.
const (
	DefaultPresenceInterval = 10 * time.Second
	DefaultPresenceExpiry   = 30 * time.Second
	DefaultPresenceMaxUsers = 100
	DefaultPresenceDebounce = 250 * time.Millisecond
	DefaultPresenceFrames   = time.Second
	DefaultPresenceHold     = time.Hour
)

// PresenceConfig tunes a Presence. Zero values mean the documented defaults.
type PresenceConfig struct {
	Hub      string        // this hub's id: the field its entries are written under (required)
	Interval time.Duration // the hub's liveness record is rewritten this often (default 10s)
	Expiry   time.Duration // the record lives this long past its writing, and with it the entries (default 30s)
	MaxUsers int           // users named per entry and per total (default 100)
	Debounce time.Duration // a change is written this long after it, with the changes that follow (default 250ms)
	Frames   time.Duration // presence frames go out at most this often per topic (default 1s)
	// Reread is how often frames re-read a topic's other hubs when nothing changed on this hub (default 2s): the
	// store read per framed topic, and how late another hub's change may reach this hub's frames.
	Reread time.Duration
	// Hold is an entry's own deadline past its writing (default an hour, at least four expiries): each entry is
	// re-touched every quarter of it, spread over the intervals, so its hash outlives every live entry and a dead
	// hub's entries, if nobody reads them, are gone with the hash within Hold.
	Hold   time.Duration
	Logger zerolog.Logger
}

func (c PresenceConfig) withDefaults() PresenceConfig {
	if c.Interval <= 0 {
		c.Interval = DefaultPresenceInterval
	}
	if c.Expiry <= 0 {
		c.Expiry = DefaultPresenceExpiry
	}
	if c.MaxUsers <= 0 {
		c.MaxUsers = DefaultPresenceMaxUsers
	}
	if c.Debounce <= 0 {
		c.Debounce = DefaultPresenceDebounce
	}
	if c.Frames <= 0 {
		c.Frames = DefaultPresenceFrames
	}
	if c.Reread <= 0 {
		c.Reread = 2 * c.Frames
	}
	if c.Hold <= 0 {
		c.Hold = max(DefaultPresenceHold, 4*c.Expiry)
	}
	return c
}

// Presence keeps this hub's entries in the store, one per watched topic, and sends presence frames. Its cost follows
// the (hub, topic) pairs, never the streams, and only when they change: a change is written once per debounce; each
// interval the hub rewrites its one liveness record, and re-touches the few entries whose turn it is (each entry once
// per Hold/4).
type Presence struct {
	h     *Hub
	store PresenceStore
	cfg   PresenceConfig

	mu      sync.Mutex
	dirty   map[string]struct{}
	touched map[string]struct{} // changed here since the last frames round
	kick    chan struct{}

	// owned by Run
	turns   []map[string]bool    // the topics with an entry of ours in the store, by their turn to be re-touched
	retry   map[string]bool      // topics whose last write or removal failed: the next interval tries again
	sent    map[string][]byte    // the last full frame per framed topic
	readAt  map[string]time.Time // when each framed topic's total was last read
	tick    int                  // refresh intervals so far
	aliveAt time.Time            // when the liveness record was last written
	again   bool                 // rewrite every entry at the next interval too (the record had lapsed)
}

// NewPresence returns the presence of h's topics; it follows h's watchers from now on. Call Run.
func NewPresence(h *Hub, store PresenceStore, cfg PresenceConfig) *Presence {
	p := &Presence{h: h, store: store, cfg: cfg.withDefaults(), dirty: map[string]struct{}{}, touched: map[string]struct{}{},
		kick: make(chan struct{}, 1), retry: map[string]bool{}, sent: map[string][]byte{}, readAt: map[string]time.Time{}}
	p.turns = make([]map[string]bool, max(1, int(p.cfg.Hold/4/p.cfg.Interval)))
	for i := range p.turns {
		p.turns[i] = map[string]bool{}
	}
	h.OnWatchers(p.changed)
	return p
}

// changed runs under the hub's lock: it takes note and returns.
func (p *Presence) changed(topic string) {
	p.mu.Lock()
	p.dirty[topic] = struct{}{}
	p.touched[topic] = struct{}{}
	p.mu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// Run writes entries and sends frames until ctx ends, then removes this hub's entries and record (a hub that dies
// without that is forgotten when its record's deadline passes).
func (p *Presence) Run(ctx context.Context) error {
	p.alive(ctx)
	refresh := time.NewTicker(p.cfg.Interval)
	defer refresh.Stop()
	frames := time.NewTicker(p.cfg.Frames)
	defer frames.Stop()
	debounce := time.NewTimer(0)
	<-debounce.C
	armed := false
	for {
		select {
		case <-ctx.Done():
			p.leave()
			return nil
		case <-p.kick:
			if !armed {
				debounce.Reset(p.cfg.Debounce)
				armed = true
			}
		case <-debounce.C:
			armed = false
			p.mu.Lock()
			topics := slices.Collect(maps.Keys(p.dirty))
			clear(p.dirty)
			p.mu.Unlock()
			p.write(ctx, topics)
		case <-refresh.C:
			p.refresh(ctx)
		case <-frames.C:
			p.frames(ctx)
		}
	}
}

// alive writes this hub's liveness record; it reports whether every entry must be written again: the record was
// missing (readers took the hub for dead), or its last writing is an expiry old (readers may have).
func (p *Presence) alive(ctx context.Context) bool {
	now := time.Now()
	fresh, err := p.store.Alive(ctx, p.cfg.Hub, now.Add(p.cfg.Expiry))
	if err != nil {
		p.warn(ctx, err, "")
		return false
	}
	lapsed := fresh || now.Sub(p.aliveAt) >= p.cfg.Expiry
	p.aliveAt = now
	return lapsed
}

// refresh, every interval: the liveness record, the entries whose last write or removal failed, and the entries
// whose turn it is to be re-touched (all of them after a lapse, then once more, past a reader's cached view of the
// record). It visits those topics alone, not every watched one: an idle hub's interval costs the same whatever it
// watches (a change reaches the store through the debounce, not through here).
func (p *Presence) refresh(ctx context.Context) {
	lapsed := p.alive(ctx)
	every := lapsed || p.again
	p.again = lapsed
	p.tick++
	var topics []string
	if every {
		topics = append(p.h.WatchedTopics(), p.writtenTopics()...)
	} else {
		topics = slices.Collect(maps.Keys(p.turns[p.tick%len(p.turns)]))
	}
	for t := range p.retry {
		topics = append(topics, t)
	}
	clear(p.retry)
	p.write(ctx, topics)
}

// turnSet is the set of written topics that t belongs in: those of its turn.
func (p *Presence) turnSet(t string) map[string]bool { return p.turns[turnOf(t, len(p.turns))] }

// writtenTopics lists the topics with an entry of ours in the store.
func (p *Presence) writtenTopics() []string {
	var out []string
	for _, set := range p.turns {
		for t := range set {
			out = append(out, t)
		}
	}
	return out
}

// turnOf spreads the topics over turns intervals (FNV-1a of the name).
func turnOf(topic string, turns int) int {
	h := uint32(2166136261)
	for i := 0; i < len(topic); i++ {
		h = (h ^ uint32(topic[i])) * 16777619
	}
	return int(h % uint32(turns))
}

// write brings this hub's entries of topics up to date: written for a watched topic (putBatch at a time, one round
// trip each), removed for one nobody here watches any more. A topic may be named more than once. What fails is
// kept for the next interval.
func (p *Presence) write(ctx context.Context, topics []string) {
	deadline := time.Now().Add(p.cfg.Hold)
	puts := make(map[string]PresenceEntry, min(len(topics), putBatch))
	flush := func() {
		if len(puts) == 0 {
			return
		}
		err := p.store.PutPresence(ctx, puts)
		if err != nil {
			p.warn(ctx, err, "")
		}
		for t := range puts {
			if err != nil {
				p.retry[t] = true
			} else {
				p.turnSet(t)[t] = true
			}
		}
		clear(puts)
	}
	for _, t := range topics {
		w := p.h.Watchers(t, p.cfg.MaxUsers)
		switch {
		case w.Count > 0:
			puts[t] = PresenceEntry{Hub: p.cfg.Hub, Count: w.Count, Users: w.Users, Truncated: w.Truncated, Deadline: deadline}
			if len(puts) == putBatch {
				flush()
			}
		case p.turnSet(t)[t]:
			if err := p.store.DropPresence(ctx, t, p.cfg.Hub); err != nil {
				p.warn(ctx, err, t)
				p.retry[t] = true
			} else {
				delete(p.turnSet(t), t)
			}
		}
	}
	flush()
}

// putBatch is how many entries one round trip writes.
const putBatch = 500

func (p *Presence) warn(ctx context.Context, err error, topic string) {
	if ctx.Err() == nil {
		p.cfg.Logger.Warn().Err(err).Str("topic", topic).Msg("presence: entries not written; the next interval retries")
	}
}

// leave removes this hub's entries, then its record, as it stops.
func (p *Presence) leave() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, t := range p.writtenTopics() {
		if p.store.DropPresence(ctx, t, p.cfg.Hub) != nil {
			return
		}
	}
	_ = p.store.Gone(ctx, p.cfg.Hub)
}

// Total is a topic's watchers across every hub.
type Total struct {
	Topic     string   `json:"topic"`
	Count     int      `json:"count"`
	Users     []string `json:"users"`
	Hubs      int      `json:"hubs"`
	Truncated bool     `json:"truncated"`
}

// Total adds up topic's entries of the other hubs and this hub's own watchers, as they are now. A user watching
// through several hubs is named once; the count is of streams.
func (p *Presence) Total(ctx context.Context, topic string) (Total, error) {
	entries, err := p.store.ReadPresence(ctx, topic)
	if err != nil {
		return Total{}, err
	}
	own := p.h.Watchers(topic, p.cfg.MaxUsers)
	tot := Total{Topic: topic, Users: []string{}}
	users := map[string]bool{}
	add := func(count int, names []string, truncated bool) {
		if count <= 0 {
			return
		}
		tot.Count += count
		tot.Hubs++
		tot.Truncated = tot.Truncated || truncated
		for _, u := range names {
			users[u] = true
		}
	}
	for _, e := range entries {
		if e.Hub != p.cfg.Hub {
			add(e.Count, e.Users, e.Truncated)
		}
	}
	add(own.Count, own.Users, own.Truncated)
	tot.Users = slices.Sorted(maps.Keys(users))
	if len(tot.Users) > p.cfg.MaxUsers {
		tot.Users, tot.Truncated = tot.Users[:p.cfg.MaxUsers], true
	}
	if tot.Users == nil {
		tot.Users = []string{}
	}
	return tot, nil
}

// countedJSON is Total's shape without users, for viewers who may not see them.
type countedJSON struct {
	Topic string `json:"topic"`
	Count int    `json:"count"`
	Hubs  int    `json:"hubs"`
}

// frames sends a presence frame for each topic some stream here asked frames of, when its total changed since the
// last one: the full total to viewers who may see users, the count to the others when that changed. A topic is read
// again when its watchers here changed, else once per Reread.
func (p *Presence) frames(ctx context.Context) {
	framed := p.h.FramedTopics()
	p.mu.Lock()
	touched := p.touched
	if len(touched) > 0 {
		p.touched = map[string]struct{}{}
	}
	p.mu.Unlock()
	if len(framed) == 0 && len(p.sent) == 0 {
		return // nobody here asked for frames: nothing to read or send
	}
	now := time.Now()
	keep := make(map[string][]byte, len(framed))
	reads := make(map[string]time.Time, len(framed))
	for _, topic := range framed {
		last, seen := p.sent[topic]
		_, changed := touched[topic]
		if at := p.readAt[topic]; seen && !changed && now.Sub(at) < p.cfg.Reread {
			keep[topic], reads[topic] = last, at
			continue
		}
		reads[topic] = now
		tot, err := p.Total(ctx, topic)
		if err != nil {
			if last, ok := p.sent[topic]; ok {
				keep[topic] = last
			}
			continue
		}
		full, _ := json.Marshal(tot)
		keep[topic] = full
		if seen && string(last) == string(full) {
			continue
		}
		var counted *Event
		if !seen || countOf(last) != [2]int{tot.Count, tot.Hubs} {
			data, _ := json.Marshal(countedJSON{Topic: topic, Count: tot.Count, Hubs: tot.Hubs})
			counted = &Event{Topic: topic, Type: PresenceType, Data: data, Source: SourceEphemeral}
		}
		p.h.Notify(topic, &Event{Topic: topic, Type: PresenceType, Data: full, Source: SourceEphemeral}, counted)
	}
	p.sent, p.readAt = keep, reads
}

func countOf(full []byte) [2]int {
	var c countedJSON
	_ = json.Unmarshal(full, &c)
	return [2]int{c.Count, c.Hubs}
}

// PresenceType is the event type of presence frames, reserved: publishers cannot use it.
const PresenceType = "presence"
