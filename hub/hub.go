package hub

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"
)

// ErrClosed is returned by Subscribe after Close.
var ErrClosed = errors.New("hub closed")

// Store is what the hub needs from the event store (Redis, owned by package pubsub). Its methods are safe for
// concurrent use.
type Store interface {
	// Follow starts the live feed of topic into Hub.Broadcast, if it is not running already. It does not block; the
	// returned channel is closed once every event published from then on will be broadcast, so history read after
	// that overlaps the live feed and nothing falls between them.
	Follow(topic string) (ready <-chan struct{})
	// Unfollow ends the live feed of topic; the hub calls it when the last subscriber of the topic leaves.
	Unfollow(topic string)
	// Read returns up to limit stored events of topic after id, oldest first, and fewer when the store bounds a
	// page in bytes; more is false when the stream ends there.
	Read(ctx context.Context, topic string, after ID, limit int) (page []*Event, more bool, err error)
	// Tail returns the last n stored events of topic, oldest first: all of them, or when they do not fit in one
	// page the first page of them, and more to say that the rest follows the page's last event.
	Tail(ctx context.Context, topic string, n int) (page []*Event, more bool, err error)
	// Newest returns the id of the topic's newest stored entry, valid or not (zero for an empty stream): where a
	// position at the end of the stream really is.
	Newest(ctx context.Context, topic string) (ID, error)
}

// The defaults of Config, exported so the hub's configuration reads them instead of writing them again.
const (
	DefaultClientBuffer = 256
	// DefaultMaxReplay also caps history=N on /events: both bound the events one request replays.
	DefaultMaxReplay  = 10000
	DefaultReplayPage = 1000
)

// Config tunes a Hub. Zero values mean the documented defaults.
type Config struct {
	// ClientBuffer is the number of events queued per client before it is evicted as slow (default 256).
	ClientBuffer int
	// MaxReplay bounds the events replayed to one request; past it the client gets a reset (default 10000).
	MaxReplay int
	// ReplayPage is the number of events read from the store at once during a replay (default 1000).
	ReplayPage int
	// Metrics records the hub's figures; nil means unregistered metrics.
	Metrics *Metrics
	// Logger gets the hub's decisions at debug level: replay ranges, resets, evictions. The zero value logs nothing.
	Logger zerolog.Logger
}

func (c Config) withDefaults() Config {
	if c.ClientBuffer <= 0 {
		c.ClientBuffer = DefaultClientBuffer
	}
	if c.MaxReplay <= 0 {
		c.MaxReplay = DefaultMaxReplay
	}
	if c.ReplayPage <= 0 {
		c.ReplayPage = DefaultReplayPage
	}
	if c.Metrics == nil {
		c.Metrics = NewMetrics(nil)
	}
	return c
}

// Hub routes events to the subscriptions of their topic. Broadcast never blocks: each subscription has a bounded
// buffer, and one that is full is evicted rather than waited for.
type Hub struct {
	cfg   Config
	store Store

	mu     sync.RWMutex // guards topics, framed and closed; never held while sending
	topics map[string]*topic
	framed map[string]struct{} // the topics with a stream that asked for presence frames
	closed bool
	// live mirrors topics for Broadcast, which looks a topic up without taking mu; it is written under mu.
	live sync.Map
	// watching is told of every topic whose watchers changed (see OnWatchers); it runs under mu.
	watching atomic.Pointer[func(topic string)]
}

type topic struct {
	subs  atomic.Pointer[subSet] // copy-on-write: Broadcast reads without a lock
	ready <-chan struct{}
	w     watchers // guarded by Hub.mu
}

// New returns a hub that follows topics in store on demand.
func New(store Store, cfg Config) *Hub {
	return &Hub{cfg: cfg.withDefaults(), store: store, topics: make(map[string]*topic), framed: map[string]struct{}{}}
}

// Metrics returns the hub's metrics.
func (h *Hub) Metrics() *Metrics { return h.cfg.Metrics }

// Subscribe registers a subscription to topics (validated by the caller, without duplicates). Events broadcast from
// now on are queued for it; call Start to replay what it missed and hand over to live delivery, and Close when done.
func (h *Hub) Subscribe(topics []string) (*Subscription, error) {
	return h.SubscribeAs(topics, Viewer{})
}

// SubscribeAs is Subscribe for a viewer whose identity presence counts (and names, unless anonymous), and who may ask
// for presence frames.
func (h *Hub) SubscribeAs(topics []string, v Viewer) (*Subscription, error) {
	s := newSubscription(h, topics, h.cfg.ClientBuffer)
	s.viewer = v
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrClosed
	}
	for i, name := range topics {
		t := h.topics[name]
		if t == nil {
			t = &topic{ready: h.store.Follow(name)}
			t.subs.Store(newSubSet())
			h.topics[name] = t
			h.live.Store(name, t)
		}
		t.subs.Store(t.subs.Load().with(s))
		s.pos[i].ready = t.ready
		if t.w.join(v); v.Frames {
			h.framed[name] = struct{}{}
		}
		h.watchersChanged(name)
	}
	h.cfg.Metrics.subscriptions.Inc()
	return s, nil
}

// remove unregisters s from its topics, ending the live feed of topics left without subscribers.
func (h *Hub) remove(s *Subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, name := range s.topics {
		t := h.topics[name]
		if t == nil {
			continue
		}
		next, ok := t.subs.Load().without(s)
		if !ok {
			continue
		}
		if t.w.leave(s.viewer); t.w.frames == 0 {
			delete(h.framed, name)
		}
		if next.n == 0 {
			delete(h.topics, name)
			h.live.Delete(name)
			h.store.Unfollow(name)
		}
		t.subs.Store(next)
		h.watchersChanged(name)
	}
	h.cfg.Metrics.subscriptions.Dec()
}

// Broadcaster is what feeds the hub events: *Hub is one, and so is anything that passes events on to one (the
// schema checker on receipt). pubsub's subscriber feeds a Broadcaster. Broadcast must not block.
type Broadcaster interface {
	Broadcast(ev *Event)
}

// Broadcast queues ev for every subscription of its topic. It never blocks; a subscription whose buffer is full is
// evicted (or, while it is still replaying, told to read the stream again). Events of one topic must be broadcast in
// stream order, from one goroutine at a time per topic.
func (h *Hub) Broadcast(ev *Event) {
	if c := h.cfg.Metrics.received[ev.Source]; c != nil { // resets are not received events
		c.Inc()
	}
	t, ok := h.live.Load(ev.Topic)
	if !ok {
		return
	}
	for _, block := range t.(*topic).subs.Load().blocks {
		for _, s := range block {
			s.deliver(ev)
		}
	}
}

// Topics returns the number of topics with at least one subscriber.
func (h *Hub) Topics() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.topics)
}

// Close ends every subscription with ReasonShutdown; later Subscribe calls fail with ErrClosed. It is idempotent and
// does not wait for the consumers: they see Done and return on their own.
func (h *Hub) Close() {
	h.mu.Lock()
	h.closed = true
	var all []*Subscription
	for _, t := range h.topics {
		t.subs.Load().each(func(s *Subscription) { all = append(all, s) })
	}
	h.mu.Unlock()
	for _, s := range all {
		s.end(ReasonShutdown)
	}
}
