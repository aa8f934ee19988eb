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

// Subscription is one client's view of some topics: one bounded queue shared by all of them.
//
// A consumer calls, in this order:
//
//  1. OnWake, if it has no goroutine of its own while idle (or must cut a blocked write short when the end comes);
//  2. Start, which replays what the client missed through a Sink and hands over to live delivery;
//  3. then, until Done: when woken (or Ready holds a value), CatchUp if Lagged, then Take, and Advance for each event
//     taken, in order, delivering it unless Advance reports a duplicate; Position reads the cursor it has reached;
//  4. Close, once it is finished with the subscription.
//
// Those methods belong to the one goroutine that consumes the subscription at a time. Close, Done and Reason may be
// called from any goroutine.
type Subscription struct {
	hub    *Hub
	topics []string
	q      queue
	state  atomic.Int32
	pos    []position // per topic, same order as topics; owned by the consumer
	viewer Viewer     // fixed at Subscribe

	endOnce sync.Once
	done    chan struct{}
	reason  atomic.Pointer[Reason]
	onWake  atomic.Pointer[func()]
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
			s.hub.cfg.Logger.Debug().Strs("topics", s.topics).Int("buffer", s.q.limit).Msg("subscription evicted: queue full")
		}
		close(s.done)
		s.wake()
		s.hub.remove(s)
	})
}

// OnWake registers f to run after each event queued for the consumer, when the subscription lags, and once when it
// ends (Done is closed by then). It runs on the goroutine that caused it (Broadcast's, or whichever ends the
// subscription), so it must not block. A consumer that has no goroutine of its own while idle uses it to be woken; one
// blocked in a write uses the end to cut that write short.
func (s *Subscription) OnWake(f func()) { s.onWake.Store(&f) }

func (s *Subscription) wake() {
	if f := s.onWake.Load(); f != nil {
		(*f)()
	}
}

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
// pass each event taken through Advance.
func (s *Subscription) Take(dst []*Event, most int) []*Event { return s.q.take(dst, most) }

// Ready returns a channel that holds a value while events may be queued: a consumer with a goroutine of its own
// waits on it, then calls Take. A value can outlive the events it stood for, so Take may return none.
func (s *Subscription) Ready() <-chan struct{} { return s.q.signal() }

// queued returns the number of events queued now.
func (s *Subscription) queued() int { return s.q.len() }

// Topics returns the subscribed topics, in the order given to Subscribe.
func (s *Subscription) Topics() []string { return s.topics }

// Advance moves the position of ev's topic to ev, as delivered, and returns false; or, for an event at or below the
// position already (a live copy of one replayed), it changes nothing and reports true: a duplicate, which the consumer
// drops. This is how replay and live delivery meet without a gap or a duplicate. Events without an id (ephemeral,
// resets) are never duplicates.
func (s *Subscription) Advance(ev *Event) (duplicate bool) {
	if !ev.Stored() {
		return false
	}
	i := s.index(ev.Topic)
	if i < 0 {
		return true
	}
	p := &s.pos[i]
	if p.set && !p.last.Less(ev.ID) {
		return true
	}
	p.last, p.set = ev.ID, true
	return false
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
