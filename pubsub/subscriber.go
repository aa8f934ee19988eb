package pubsub

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"

	"github.com/syncverse/hub/hub"
)

// SubscriberConfig tunes a Subscriber. Zero values mean the documented defaults.
type SubscriberConfig struct {
	Prefix        string
	MaxEventBytes int           // default 64 KiB
	TailCheck     time.Duration // how often topics with recent traffic have their stream end compared with what was delivered (default 5s)
	Sweep         time.Duration // how often every followed topic is, quiet or not (default DefaultSweepChecks × TailCheck): see subscriber_check.go
	PingEvery     time.Duration // a silent pub/sub connection is pinged this often, and dropped after two silent rounds (default 5s)
	QueueLimit    int           // live messages waiting for the processor; past it they are dropped and repaired from the stream (default 100000)
	MaxPageBytes  int           // a history page ends once it holds this many bytes (default 1 MiB)
	MaxReads      int           // history reads running at once; more wait (default 8)
	MaxSnapshot   int           // a snapshot holds at most about this many bytes of state (default 8 MiB)
	Sharded       bool          // SSUBSCRIBE (Redis 7): each topic's channel is served by its slot's master only; publishers must SPUBLISH
	Logger        zerolog.Logger
	Registerer    prometheus.Registerer
	// Tracer, when not nil, records the broadcast of each event that carries a traceparent as a span of the
	// publisher's trace (tracing.enabled); nil costs nothing.
	Tracer trace.Tracer
}

// DefaultTailCheck is SubscriberConfig.TailCheck's default.
const DefaultTailCheck = 5 * time.Second

func (c SubscriberConfig) withDefaults() SubscriberConfig {
	if c.TailCheck <= 0 {
		c.TailCheck = DefaultTailCheck
	}
	if c.Sweep <= 0 {
		c.Sweep = DefaultSweepChecks * c.TailCheck
	}
	if c.PingEvery <= 0 {
		c.PingEvery = 5 * time.Second
	}
	if c.QueueLimit <= 0 {
		c.QueueLimit = 100000
	}
	return c
}

// Subscriber feeds the hub from Redis: one pub/sub connection subscribed to the channel of every followed topic
// (sharded, one per cluster master: see shardedConn).
// It implements hub.Store. Per topic it remembers the last id it broadcast; an envelope whose prev is not that id,
// a resubscription after a reconnect, or a periodic tail check (of the topics with recent traffic, and a slower
// sweep of all) makes it read the missing range from the stream and broadcast it in order, so each event reaches the
// hub exactly once, in order.
//
// Two goroutines, both owned by Run: the reader only moves messages from the connection into a queue (it never
// waits for the hub or for Redis commands), the processor decodes, repairs and broadcasts.
type Subscriber struct {
	*History
	rdb redis.UniversalClient
	cfg SubscriberConfig
	m   *subscriberMetrics
	log zerolog.Logger

	psMu     sync.Mutex // guards ps and channels: the reader may replace the connection
	ps       liveConn
	channels map[string]struct{}

	mu       sync.Mutex
	feeds    map[string]*feed // followed topics, by the hub's Follow/Unfollow
	queue    []item
	overflow map[string]bool // topics whose live messages were dropped from a full queue
	wake     chan struct{}

	up atomic.Bool // the pub/sub connection answers
}

type itemKind uint8

const (
	itemFollow itemKind = iota
	itemUnfollow
	itemConfirmed
	itemMessage
)

type item struct {
	kind    itemKind
	feed    *feed
	topic   string
	payload string
}

// feed is one followed topic. Apart from ready, its fields belong to the processor.
type feed struct {
	topic  string
	ready  chan struct{} // closed when state reaches feedKnown: see found
	state  feedState
	last   hub.ID // with feedKnown: the id of the newest event broadcast (or the stream's end when followed)
	repair bool   // read the stream after last at the next chance
	// hot counts the tail checks still due after the topic's last traffic; sweepAt is when the sweep checks it.
	hot     uint8
	sweepAt time.Time
}

// feedState is where a followed topic's live feed stands. It only moves forward, possibly skipping steps (a
// confirmation from a reconnect's resubscription, a live envelope that tells where the stream is); a resubscription
// of a feedKnown topic keeps the state and asks for a repair instead.
type feedState uint8

const (
	feedUnsent    feedState = iota // the SUBSCRIBE has not been sent successfully yet
	feedSent                       // sent; Redis has not confirmed it
	feedConfirmed                  // confirmed, so a baseline read now is overlapped by the live feed; none has succeeded yet
	feedKnown                      // last is known and ready is closed
)

// NewSubscriber returns a Subscriber; call Run to start it.
func NewSubscriber(rdb redis.UniversalClient, cfg SubscriberConfig) *Subscriber {
	cfg = cfg.withDefaults()
	store := NewHistory(rdb, HistoryConfig{Prefix: cfg.Prefix, MaxEventBytes: cfg.MaxEventBytes, MaxPageBytes: cfg.MaxPageBytes,
		MaxReads: cfg.MaxReads, MaxSnapshot: cfg.MaxSnapshot, Logger: cfg.Logger, Registerer: cfg.Registerer})
	return &Subscriber{
		History:  store,
		rdb:      rdb,
		cfg:      cfg,
		m:        newSubscriberMetrics(cfg.Registerer),
		log:      cfg.Logger,
		feeds:    make(map[string]*feed),
		channels: make(map[string]struct{}),
		overflow: make(map[string]bool),
		wake:     make(chan struct{}, 1),
	}
}

// Ready reports whether the live subscription is up.
func (s *Subscriber) Ready() bool { return s.up.Load() }

// Follow implements hub.Store.
func (s *Subscriber) Follow(topic string) <-chan struct{} {
	f := &feed{topic: topic, ready: make(chan struct{})}
	s.mu.Lock()
	s.feeds[topic] = f
	s.queue = append(s.queue, item{kind: itemFollow, feed: f, topic: topic})
	s.mu.Unlock()
	s.notify()
	return f.ready
}

// Unfollow implements hub.Store.
func (s *Subscriber) Unfollow(topic string) {
	s.mu.Lock()
	f := s.feeds[topic]
	delete(s.feeds, topic)
	if f != nil {
		s.queue = append(s.queue, item{kind: itemUnfollow, feed: f, topic: topic})
	}
	s.mu.Unlock()
	s.notify()
}

func (s *Subscriber) notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// enqueue is the reader's only way to hand work on; it never blocks.
func (s *Subscriber) enqueue(it item) {
	s.mu.Lock()
	if it.kind == itemMessage && len(s.queue) >= s.cfg.QueueLimit {
		s.overflow[it.topic] = true
		s.mu.Unlock()
		s.m.overflows.Inc()
		return
	}
	s.queue = append(s.queue, it)
	s.mu.Unlock()
	s.notify()
}

func (s *Subscriber) take() ([]item, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	items := s.queue
	s.queue = nil
	var over []string
	for t := range s.overflow {
		over = append(over, t)
	}
	clear(s.overflow)
	return items, over
}

// Run subscribes and feeds b until ctx ends; it returns when both of its goroutines have.
func (s *Subscriber) Run(ctx context.Context, b hub.Broadcaster) error {
	s.psMu.Lock()
	s.ps = s.open(ctx)
	s.psMu.Unlock()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); s.receive(ctx) }()
	go func() { defer wg.Done(); s.process(ctx, traced(b, s.cfg.Tracer)) }()
	<-ctx.Done()
	_ = s.pubsub().Close() // unblocks the reader
	wg.Wait()
	_ = s.pubsub().Close() // in case the reader replaced it meanwhile
	s.up.Store(false)
	return nil
}
