package hub

import "sync"

// Ring sizes of a queue: the first one made, and the largest one kept once the queue empties. Most streams hold a
// few events at a time; a burst grows the ring up to the limit, and it is let go when the consumer catches up.
const (
	firstRing = 8
	keptRing  = 64
)

// queue is a subscription's bounded FIFO of events, between Broadcast and the consumer. Unlike a channel of the
// limit's size, its ring is made on the first event and grows by doubling, so an idle stream holds no buffer.
type queue struct {
	mu    sync.Mutex
	ring  []*Event
	head  int // index of the oldest event
	n     int // events queued
	limit int
	ready chan struct{} // made by signal; holds a token while events may be queued
}

// push queues ev, or reports false when the queue holds its limit.
func (q *queue) push(ev *Event) bool {
	q.mu.Lock()
	if q.n == q.limit {
		q.mu.Unlock()
		return false
	}
	if q.n == len(q.ring) {
		q.grow()
	}
	i := q.head + q.n
	if i >= len(q.ring) {
		i -= len(q.ring)
	}
	q.ring[i] = ev
	q.n++
	q.poke()
	q.mu.Unlock()
	return true
}

// grow doubles the ring (up to the limit), moving the queued events to its start in order.
func (q *queue) grow() {
	size := min(max(firstRing, 2*len(q.ring)), q.limit)
	ring := make([]*Event, size)
	k := copy(ring, q.ring[q.head:])
	copy(ring[k:], q.ring[:q.head])
	q.ring, q.head = ring, 0
}

// take moves up to most queued events, oldest first, onto dst and returns it.
func (q *queue) take(dst []*Event, most int) []*Event {
	q.mu.Lock()
	for ; q.n > 0 && most > 0; most-- {
		dst = append(dst, q.ring[q.head])
		q.ring[q.head] = nil // the queue must not keep delivered events alive
		q.head++
		if q.head == len(q.ring) {
			q.head = 0
		}
		q.n--
	}
	q.settle()
	q.mu.Unlock()
	return dst
}

// drop empties the queue.
func (q *queue) drop() {
	q.mu.Lock()
	clear(q.ring)
	q.n = 0
	q.settle()
	q.mu.Unlock()
}

// settle runs after events were taken. A queue still holding events keeps its token, so a consumer that took only
// part of them is woken again; an empty one takes the token back and lets a ring that a burst grew go.
func (q *queue) settle() {
	if q.n > 0 {
		q.poke()
		return
	}
	q.head = 0
	if q.ready != nil { // the token stands for events already taken
		select {
		case <-q.ready:
		default:
		}
	}
	if len(q.ring) > keptRing {
		q.ring = nil
	}
}

// poke puts a token in ready, if it is made and has none. Called with mu held.
func (q *queue) poke() {
	if q.ready == nil {
		return
	}
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// signal returns the channel that holds a token while events may be queued, making it on the first call.
func (q *queue) signal() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.ready == nil {
		q.ready = make(chan struct{}, 1)
		if q.n > 0 {
			q.ready <- struct{}{}
		}
	}
	return q.ready
}

func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}
