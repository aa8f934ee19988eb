package hub

import (
	"sync"
	"sync/atomic"
)

// Reason says why a subscription ended; it doubles as a metric label.
type Reason string

const (
	ReasonClosed   Reason = "closed"   // the consumer closed it (the client left)
	ReasonSlow     Reason = "slow"     // its buffer was full: the client could not keep up
	ReasonShutdown Reason = "shutdown" // the hub is closing
)

// Subscription states. Broadcast and the consumer move between them with compare-and-swap only, so an overflow
// during replay is never mistaken for one during live delivery.
const (
	stateReplaying int32 = iota // Start is reading history; live events queue up
	stateLagged                 // the queue overflowed during replay: Start must read the stream again
	stateLive                   // the queue overflowing now evicts the subscription
	stateEnded
)

// Subscription is one client's view of some topics: one bounded queue shared by all of them. Its methods other than
// Close, Done and Reason belong to the one goroutine that consumes it.
type Subscription struct {
	hub    *Hub
	topics []string
	q      queue
	state  atomic.Int32
	pos    []position // per topic, same order as topics; owned by the consumer

	endOnce sync.Once
	done    chan struct{}
	reason  atomic.Pointer[Reason]
	onEnd   atomic.Pointer[func()]
	notify  atomic.Pointer[func()]
}

type position struct {
	last  ID
	set   bool
	ready <-chan struct{}
}

func newSubscription(h *Hub, topics []string, buffer int) *Subscription {
	return &Subscription{
		hub:    h,
		topics: topics,
		q:      queue{limit: buffer},
		pos:    make([]position, len(topics)),
		done:   make(chan struct{}),
	}
}

// deliver is Broadcast's non-blocking send. The queue outlives the end, so a send racing with it is safe.
func (s *Subscription) deliver(ev *Event) {
	if s.q.push(ev) {
		s.wake()
		return
	}
	for {
		switch st := s.state.Load(); st {
		case stateReplaying:
			if s.state.CompareAndSwap(st, stateLagged) {
				return // Start sees it: it is running on the consumer's goroutine
			}
		case stateLive:
			// A repair hands over in one burst what was published while Redis was out of reach, often more than a
			// queue holds; that says nothing of this client's speed. Evicting here would make every client of the
			// topic reconnect at once after each outage, so the consumer reads the rest from the store instead
			// (CatchUp), at its own pace. Live events still evict: they come at the publishers' pace.
			if ev.Source == SourceRepair {
				if s.state.CompareAndSwap(st, stateLagged) {
					s.wake()
					return
				}
				continue
			}
			s.end(ReasonSlow)
			return
		default: // lagged or ended: the event will be read from the stream, or nobody wants it
			return
		}
	}
}

// end finishes the subscription once, for the given reason.
func (s *Subscription) end(r Reason) {
	s.endOnce.Do(func() {
		s.state.Store(stateEnded)
		s.reason.Store(&r)
		if r == ReasonSlow {
			s.hub.cfg.Metrics.evicted.WithLabelValues(string(r)).Inc()
		}
		close(s.done)
		if f := s.onEnd.Load(); f != nil {
			(*f)()
		}
		s.hub.remove(s)
	})
}

// Notify registers f to run after each event queued for the consumer and when the subscription lags, on the
// goroutine that queued it (Broadcast's), so f must not block. A consumer that does not wait on Ready, because it
// has no goroutine of its own while it is idle, uses it to be woken; it also registers OnEnd.
func (s *Subscription) Notify(f func()) { s.notify.Store(&f) }

func (s *Subscription) wake() {
	if f := s.notify.Load(); f != nil {
		(*f)()
	}
}

// OnEnd registers f to run once when the subscription ends, on the goroutine that ends it (often Broadcast's), so f
// must not block. A consumer blocked in a write uses it to cut that write short.
func (s *Subscription) OnEnd(f func()) { s.onEnd.Store(&f) }

// Close ends the subscription (if it has not ended already) and unregisters it. It is idempotent.
func (s *Subscription) Close() { s.end(ReasonClosed) }

// Done is closed when the subscription ends: evicted, closed, or the hub shut down.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// Reason says why the subscription ended; it is empty while it runs.
func (s *Subscription) Reason() Reason {
	if r := s.reason.Load(); r != nil {
		return *r
	}
	return ""
}

// Take moves up to most queued events, oldest first, onto dst and returns it; it does not wait. After Start returns,
// pass each event taken through Accept.
func (s *Subscription) Take(dst []*Event, most int) []*Event { return s.q.take(dst, most) }

// Ready returns a channel that holds a value while events may be queued: a consumer with a goroutine of its own
// waits on it, then calls Take. A value can outlive the events it stood for, so Take may return none.
func (s *Subscription) Ready() <-chan struct{} { return s.q.signal() }

// Queued returns the number of events queued now.
func (s *Subscription) Queued() int { return s.q.len() }

// Topics returns the subscribed topics, in the order given to Subscribe.
func (s *Subscription) Topics() []string { return s.topics }

// Accept reports whether the consumer should deliver ev, and records it as delivered. It drops an event at or below
// the topic's last delivered id, which is how replay and live delivery meet without a duplicate.
func (s *Subscription) Accept(ev *Event) bool {
	if !ev.Stored() {
		return true
	}
	i := s.index(ev.Topic)
	if i < 0 {
		return false
	}
	p := &s.pos[i]
	if p.set && !p.last.Less(ev.ID) {
		return false
	}
	p.last, p.set = ev.ID, true
	return true
}

func (s *Subscription) index(topic string) int {
	for i, t := range s.topics {
		if t == topic {
			return i
		}
	}
	return -1
}

// Position returns the last delivered id of the i-th topic, and whether there is one.
func (s *Subscription) Position(i int) (ID, bool) { return s.pos[i].last, s.pos[i].set }

// Index returns the position of topic among the subscription's topics, or -1.
func (s *Subscription) Index(topic string) int { return s.index(topic) }
