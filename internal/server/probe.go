package server

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// readyWithin is how long /readyz waits for Redis to answer a PING before it answers 503 itself: an orchestrator's
// probe has a deadline of its own (often 1 s), and a Redis that accepts connections but never replies must not make
// the probe time out instead of failing.
const readyWithin = 800 * time.Millisecond

// errPingLate is /readyz's reason when Redis did not answer in time.
var errPingLate = errors.New("redis did not answer a PING within the probe's deadline")

// pinger runs one PING at a time for the probes, whatever their number: a probe that comes while one is under way
// waits for that one's answer (within its own deadline) rather than starting another. A PING outlives a probe that
// gave up on it only until the Redis client's own read timeout.
type pinger struct {
	rdb redis.UniversalClient

	mu     sync.Mutex
	flight *pingFlight // the PING under way, or nil
}

type pingFlight struct {
	done chan struct{}
	err  error // set before done is closed
}

// ping reports whether Redis answered a PING within `within`.
func (p *pinger) ping(within time.Duration) error {
	p.mu.Lock()
	f := p.flight
	if f == nil {
		f = &pingFlight{done: make(chan struct{})}
		p.flight = f
		go p.run(f)
	}
	p.mu.Unlock()
	t := time.NewTimer(within)
	defer t.Stop()
	select {
	case <-f.done:
		return f.err
	case <-t.C:
		return errPingLate
	}
}

func (p *pinger) run(f *pingFlight) {
	ctx, cancel := context.WithTimeout(context.Background(), readyWithin)
	f.err = p.rdb.Ping(ctx).Err()
	cancel()
	p.mu.Lock()
	p.flight = nil
	p.mu.Unlock()
	close(f.done)
}
