package pubsub

import (
	"context"
	"sync"
)

// readGroup coalesces identical concurrent reads, of history (XRANGE) or of a stream's end (XREVRANGE), as a
// reconnect storm makes them, without ever handing a caller a read that was sent to Redis before it arrived. That
// rule is what keeps replay exact: a subscription registers for live events first and reads history second, so a
// read sent before its registration could miss an event that was also broadcast before it, and the client would
// never see that event. Callers that arrive while a read of their key is in flight therefore wait together for the
// next one, which is sent when the first ends: one read per key at a time, each answering everyone who asked before
// it was sent. The zero value is ready.
type readGroup[T any] struct {
	mu      sync.Mutex
	flying  map[string]*readCall[T] // sent to Redis, answer pending
	waiting map[string]*readCall[T] // gathering callers until the read of the same key in flight ends
}

type readCall[T any] struct {
	done chan struct{}
	val  T
	err  error
}

// do returns read's answer for key, from a read sent after this call began. The caller that starts a call runs read
// in its own goroutine, detached from its ctx so that its leaving does not fail the others: read must be bounded by
// its own timeouts. The other callers wait for it, or for their ctx.
func (g *readGroup[T]) do(ctx context.Context, key string, read func() (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err // nobody is waiting for an answer: send nothing
	}
	g.mu.Lock()
	if g.flying == nil {
		g.flying, g.waiting = make(map[string]*readCall[T]), make(map[string]*readCall[T])
	}
	c := g.waiting[key]
	if c == nil {
		// This caller leads the call: it sends the read itself, so every read has an owner that waits for it.
		c = &readCall[T]{done: make(chan struct{})}
		prev := g.flying[key]
		if prev == nil {
			g.flying[key] = c
		} else {
			g.waiting[key] = c
		}
		g.mu.Unlock()
		g.run(key, c, prev, read)
		return c.val, c.err
	}
	g.mu.Unlock()
	select {
	case <-c.done:
		return c.val, c.err
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

func (g *readGroup[T]) run(key string, c, prev *readCall[T], read func() (T, error)) {
	if prev != nil {
		<-prev.done
		g.mu.Lock()
		delete(g.waiting, key) // from here on, newcomers wait for the next read: this one is being sent
		g.flying[key] = c
		g.mu.Unlock()
	}
	c.val, c.err = read()
	g.mu.Lock()
	if g.flying[key] == c {
		delete(g.flying, key)
	}
	g.mu.Unlock()
	close(c.done)
}
