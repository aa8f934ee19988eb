package limits

import (
	"fmt"
	"net/http"
	"net/netip"
	"sync"
	"time"
)

// Conns counts open streams, globally and per client address. A limit of 0 means none.
type Conns struct {
	max, perIP int
	mu         sync.Mutex
	total      int
	byIP       map[netip.Addr]int
}

// NewConns returns a counter that admits at most max streams, and at most perIP from one address.
func NewConns(max, perIP int) *Conns {
	return &Conns{max: max, perIP: perIP, byIP: map[netip.Addr]int{}}
}

// retryConn is the hint given with a connection refusal: long enough for streams to turn over, short enough that
// a console comes back soon after capacity frees up.
const retryConn = 5 * time.Second

// Acquire takes a slot for a stream from ip. The caller must call release exactly once, when the stream ends.
func (c *Conns) Acquire(ip netip.Addr) (release func(), err error) {
	b := bucket(ip)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.max > 0 && c.total >= c.max {
		return nil, &Refusal{Code: http.StatusServiceUnavailable, Reason: ReasonConnLimit, RetryAfter: retryConn,
			Msg: fmt.Sprintf("the hub is at its connection limit (%d streams); retry later or on another replica", c.max)}
	}
	if c.perIP > 0 && c.byIP[b] >= c.perIP {
		return nil, &Refusal{Code: http.StatusTooManyRequests, Reason: ReasonConnPerIP, RetryAfter: retryConn,
			Msg: fmt.Sprintf("too many streams from your address (at most %d); close one first", c.perIP)}
	}
	c.total++
	c.byIP[b]++
	var once sync.Once
	return func() { once.Do(func() { c.release(b) }) }, nil
}

func (c *Conns) release(b netip.Addr) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total--
	if c.byIP[b]--; c.byIP[b] <= 0 {
		delete(c.byIP, b)
	}
}

// Open returns the number of streams held.
func (c *Conns) Open() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}
