package chaos

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/syncverse/hub/hub"
)

// ClientConfig describes one browser-like SSE client.
type ClientConfig struct {
	// URLs are the replicas' base URLs. A stream that ends is resumed on the same one; a refused or failed request
	// moves to the next at once (as a load balancer would), and only when every one failed does the client wait.
	URLs   []string
	Topics []string
	// LastEventID is the first request's resume position ("" starts at the newest event).
	LastEventID string
	// Transport carries the requests; share one between the clients of a fleet.
	Transport http.RoundTripper
	// KeepData keeps each event's data (otherwise only ids are kept, to keep thousands of clients cheap).
	KeepData bool
	// MaxConnects bounds the requests the client makes (default 1000).
	MaxConnects int
	// Retry is the reconnection delay before the hub sent a retry: hint (default 3s, as browsers).
	Retry time.Duration
}

// Got is one thing a client received on a topic: an event id, or a reset.
type Got struct {
	ID     hub.ID // the event's id; for a reset, the oldest event it skips to (zero if none)
	Reset  bool
	Reason string // of a reset
	Data   []byte // with KeepData, or for a reset
}

// ClientStats counts what happened to a client's connection.
type ClientStats struct {
	Connects    int           // requests answered 200
	Failures    int           // requests refused or answered with another status
	Resets      int           // event: reset frames
	Heartbeats  int           // :heartbeat comments
	Malformed   int           // frames the hub never sends: an id or data without event:, a bad id, a bad reset
	MaxSilence  time.Duration // longest time between two lines of one open stream
	Connected   bool
	LastAttempt time.Time // when the latest request was sent
}

// Client reads /events like a browser's EventSource and records what it gets. Run owns one goroutine; the other
// methods may be called from anywhere.
type Client struct {
	cfg ClientConfig

	mu       sync.Mutex
	got      map[string][]Got
	last     map[string]hub.ID
	stats    ClientStats
	attempts []time.Time // start of every request
	ends     []time.Time // end of every stream that was open
	lat      []uint16    // delivery latency in ms (capped), while measuring
	measure  bool
	paused   chan struct{} // non-nil while paused: closed to resume

	cancel context.CancelFunc
	done   chan struct{}
}

// NewClient returns a client; call Run to connect.
func NewClient(cfg ClientConfig) *Client {
	if cfg.MaxConnects <= 0 {
		cfg.MaxConnects = 1000
	}
	if cfg.Retry <= 0 {
		cfg.Retry = 3 * time.Second
	}
	if cfg.Transport == nil {
		cfg.Transport = NewTransport(0)
	}
	return &Client{cfg: cfg, got: make(map[string][]Got), last: make(map[string]hub.ID)}
}

// NewTransport returns a transport for SSE clients. readBuffer > 0 shrinks each connection's receive buffer, so a
// client that stops reading fills its TCP window quickly, as a frozen browser tab does.
func NewTransport(readBuffer int) *http.Transport {
	d := &net.Dialer{Timeout: 2 * time.Second}
	if readBuffer > 0 {
		d.Control = smallReceiveBuffer(readBuffer)
	}
	return &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err == nil && readBuffer > 0 {
				_ = c.(*net.TCPConn).SetReadBuffer(readBuffer)
			}
			return c, err
		},
		DisableCompression:    true,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       10 * time.Second,
		ResponseHeaderTimeout: 10 * time.Second,
	}
}

// Run connects and keeps reconnecting until Stop or until MaxConnects requests were made.
func (c *Client) Run(ctx context.Context) {
	ctx, c.cancel = context.WithCancel(ctx)
	c.done = make(chan struct{})
	go func() {
		defer close(c.done)
		c.loop(ctx)
	}()
}

// Stop ends the client and waits for its goroutine.
func (c *Client) Stop() {
	if c.cancel == nil {
		return
	}
	c.cancel()
	c.Resume()
	<-c.done
}

func (c *Client) loop(ctx context.Context) {
	cursor, url := c.cfg.LastEventID, 0
	retry := c.cfg.Retry
	failedInRow := 0
	for n := 0; n < c.cfg.MaxConnects && ctx.Err() == nil; n++ {
		opened, err := c.stream(ctx, c.cfg.URLs[url], &cursor, &retry)
		if ctx.Err() != nil {
			return
		}
		if opened {
			failedInRow = 0
		} else {
			_ = err // a refused dial or a 503 from a hub that is shutting down: the next replica is the answer
			failedInRow++
			url = (url + 1) % len(c.cfg.URLs)
			if failedInRow < len(c.cfg.URLs) {
				continue
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(retry):
		}
	}
}

// stream makes one request and reads it until it ends. cursor and retry carry the EventSource's last event id and
// reconnection time from one request to the next.
func (c *Client) stream(ctx context.Context, base string, cursor *string, retry *time.Duration) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/events?"+topicQuery(c.cfg.Topics), nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if *cursor != "" {
		req.Header.Set("Last-Event-ID", *cursor)
	}
	c.mu.Lock()
	now := time.Now()
	c.stats.LastAttempt = now
	if len(c.attempts) < 4096 {
		c.attempts = append(c.attempts, now)
	}
	c.mu.Unlock()
	resp, err := c.cfg.Transport.RoundTrip(req)
	if err != nil {
		c.count(func(s *ClientStats) { s.Failures++ })
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		c.count(func(s *ClientStats) { s.Failures++ })
		return false, fmt.Errorf("GET /events: %s", resp.Status)
	}
	c.count(func(s *ClientStats) { s.Connects++; s.Connected = true })
	defer c.count(func(s *ClientStats) { s.Connected = false })
	err = c.read(ctx, resp.Body, cursor, retry)
	c.mu.Lock()
	if len(c.ends) < 4096 {
		c.ends = append(c.ends, time.Now())
	}
	c.mu.Unlock()
	return true, err
}

func (c *Client) count(f func(*ClientStats)) {
	c.mu.Lock()
	f(&c.stats)
	c.mu.Unlock()
}

// Pause stops reading: the hub's writes then fill the socket, as with a frozen tab. Resume reads again.
func (c *Client) Pause() {
	c.mu.Lock()
	if c.paused == nil {
		c.paused = make(chan struct{})
	}
	c.mu.Unlock()
}

// Resume undoes Pause.
func (c *Client) Resume() {
	c.mu.Lock()
	if c.paused != nil {
		close(c.paused)
		c.paused = nil
	}
	c.mu.Unlock()
}

func (c *Client) waitResumed(ctx context.Context) error {
	c.mu.Lock()
	p := c.paused
	c.mu.Unlock()
	if p == nil {
		return nil
	}
	select {
	case <-p:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Measure starts (or stops) recording delivery latencies, from the id's timestamp to the frame's arrival.
func (c *Client) Measure(on bool) {
	c.mu.Lock()
	c.measure = on
	if on {
		c.lat = c.lat[:0]
	}
	c.mu.Unlock()
}

// Latencies returns the recorded latencies in milliseconds.
func (c *Client) Latencies() []uint16 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]uint16(nil), c.lat...)
}

// Stats returns the client's counters.
func (c *Client) Stats() ClientStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// Received returns what the client received on topic, in order.
func (c *Client) Received(topic string) []Got {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Got(nil), c.got[topic]...)
}

// Last returns the newest id received on topic.
func (c *Client) Last(topic string) hub.ID {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last[topic]
}

// Attempts and Ends return when each request started and when each open stream ended.
func (c *Client) Attempts() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.attempts...)
}

func (c *Client) Ends() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.ends...)
}

// Topics returns the client's topics.
func (c *Client) Topics() []string { return c.cfg.Topics }

func topicQuery(topics []string) string {
	var b bytes.Buffer
	for i, t := range topics {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString("topic=")
		b.WriteString(t) // valid topics need no escaping
	}
	return b.String()
}
