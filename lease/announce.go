package lease

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// Lock event states: the `state` of a `lock` event's data, as docs/subscribing.md ("The events the console
// understands") and docs/lease.md list them.
const (
	StateAcquired = "acquired"
	StateRenewed  = "renewed"
	StateReleased = "released"
	StateLost     = "lost"
	StateExpired  = "expired"
)

// EventType is the event type of lock events.
const EventType = "lock"

// Event is the data of a lock event.
type Event struct {
	Key      string `json:"key"`
	Holder   string `json:"holder"`
	Fence    int64  `json:"fence"`
	State    string `json:"state"`
	TTLms    int64  `json:"ttl_ms"`
	Workflow string `json:"workflow,omitempty"`
}

// announcer publishes lock events from one goroutine, owned by the Locker, so that a slow or unreachable Announcer
// never delays an acquisition, a renewal or a release: they only do a non-blocking send on a bounded queue. When the
// queue is full the event is dropped and counted; the console catches up with the next transition.
type announcer struct {
	pub     Announcer
	topic   string
	timeout time.Duration
	log     zerolog.Logger
	metrics *Metrics
	queue   chan Event

	mu      sync.Mutex
	started bool
	closed  bool
	quit    chan struct{}
	closeBy time.Time // when close gave up on what is queued; set before quit is closed
	done    chan struct{}
	once    sync.Once
	failing bool // only the run goroutine touches it
}

func newAnnouncer(o Options, log zerolog.Logger) *announcer {
	a := &announcer{
		pub: o.Announcer, topic: o.Topic, timeout: o.AnnounceTimeout, log: log, metrics: o.Metrics,
		quit: make(chan struct{}), done: make(chan struct{}),
	}
	if a.pub != nil {
		a.queue = make(chan Event, o.AnnounceQueue)
	}
	return a
}

// announce queues ev without blocking. The goroutine starts with the first event, so a Locker that never announces
// owns no goroutine.
func (a *announcer) announce(ev Event) {
	a.log.Debug().Str("key", ev.Key).Int64("fence", ev.Fence).Str("state", ev.State).Msg("lease transition")
	if a.pub == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		a.metrics.announce.WithLabelValues(outcomeDropped).Inc()
		return
	}
	if !a.started {
		a.started = true
		go a.run()
	}
	select {
	case a.queue <- ev:
	default:
		a.metrics.announce.WithLabelValues(outcomeDropped).Inc()
	}
}

func (a *announcer) isClosed() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.closed
}

// close stops the goroutine after it has drained the queue for at most one timeout, and waits for it.
func (a *announcer) close() {
	a.once.Do(func() {
		a.mu.Lock()
		a.closed = true
		a.closeBy = time.Now().Add(a.timeout)
		started := a.started
		a.mu.Unlock()
		close(a.quit)
		if started {
			<-a.done
		}
	})
}

func (a *announcer) run() {
	defer close(a.done)
	for {
		select { // quit first: select picks at random among ready cases, and each queued publish may take a timeout
		case <-a.quit:
			a.drain()
			return
		default:
		}
		select {
		case ev := <-a.queue:
			a.publish(context.Background(), ev)
		case <-a.quit:
			a.drain()
			return
		}
	}
}

// drain publishes what is still queued until one timeout after close began (a publish in flight then counts
// against it too), so that Close stays bounded when Redis is down.
func (a *announcer) drain() {
	ctx, cancel := context.WithDeadline(context.Background(), a.closeBy)
	defer cancel()
	for {
		select {
		case ev := <-a.queue:
			if ctx.Err() != nil {
				a.metrics.announce.WithLabelValues(outcomeDropped).Inc()
				continue
			}
			a.publish(ctx, ev)
		default:
			return
		}
	}
}

func (a *announcer) publish(ctx context.Context, ev Event) {
	data, err := json.Marshal(ev)
	if err != nil { // cannot happen with these field types; counted rather than trusted
		a.metrics.announce.WithLabelValues(outcomeFailed).Inc()
		return
	}
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	if _, err := a.pub.Publish(ctx, a.topic, EventType, data); err != nil {
		a.metrics.announce.WithLabelValues(outcomeFailed).Inc()
		if !a.failing { // once per streak: while Redis is down every event fails, and one line says so
			a.log.Warn().Err(err).Str("key", ev.Key).Str("state", ev.State).Msg("lock events not published")
		}
		a.failing = true
		return
	}
	a.failing = false
	a.metrics.announce.WithLabelValues(outcomePublished).Inc()
}
