package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http/httputil"
	"sync"
	"sync/atomic"
	"time"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/chaos"
	"github.com/syncverse/hub/internal/sseframe"
)

// streamClient is one browser-like SSE client of the fleet: it follows one topic, resumes with Last-Event-ID after
// every end of its stream (after the hub's retry: hint, as EventSource does), moves to the next hub at once when
// one refuses it, and records every id and reset it receives for the check at the end. It speaks HTTP/1.1 on a
// bare connection, as the bench's other clients do, so that 100,000 of them stay cheap next to the hubs.
type streamClient struct {
	hubs  []string // addresses, in the order tried: its own hub first
	topic int
	path  string

	mu   sync.Mutex // guards last, read by the catch-up poll while the client runs
	last hub.ID

	recs      []chaos.Got // what arrived, in order; read after the client ended
	connects  int         // streams opened
	refused   int         // requests that did not open a stream
	malformed int         // frames the hub never sends
	firstOpen time.Time
	lastAt    time.Time // the latest event's arrival
	onHub     int       // index into hubs of the hub it was on last
}

// streamLoad is what the clients of one load-generator process share.
type streamLoad struct {
	lat       *histogram
	wins      *latWindows
	open      atomic.Int64 // streams open now
	opened    atomic.Int64 // clients whose first stream opened
	delivered atomic.Int64
	bad       atomic.Int64 // ids that did not grow: seen at once, judged at the end
	dialing   chan struct{}
	dialer    net.Dialer
}

const defaultRetry = 3 * time.Second // EventSource's, until the hub's hint arrives

// run connects and reconnects until ctx ends, resuming from c.last (at first, the anchor it was made with).
func (c *streamClient) run(ctx context.Context, l *streamLoad) {
	retry, cur, failedInRow := defaultRetry, 0, 0
	for ctx.Err() == nil {
		opened, _ := c.stream(ctx, l, cur, &retry)
		if ctx.Err() != nil {
			return
		}
		if opened {
			failedInRow = 0
		} else {
			c.refused++
			failedInRow++
			cur = (cur + 1) % len(c.hubs) // a refused dial or a 503 from a hub shutting down: the next one is the answer
			if failedInRow < len(c.hubs) {
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

// stream makes one request to hubs[cur] and reads it until it ends; it reports whether a stream opened.
func (c *streamClient) stream(ctx context.Context, l *streamLoad, cur int, retry *time.Duration) (bool, error) {
	first := c.firstOpen.IsZero()
	release := func() {}
	if first { // only the first connect is paced; reconnections come when they come, as browsers' do
		select {
		case l.dialing <- struct{}{}:
			var once sync.Once
			release = func() { once.Do(func() { <-l.dialing }) }
			defer release() // when it failed
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	conn, err := l.dialer.DialContext(ctx, "tcp", c.hubs[cur])
	if err != nil {
		return false, err
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	defer conn.Close()
	c.mu.Lock()
	cursor := c.last.String()
	c.mu.Unlock()
	req := "GET " + c.path + " HTTP/1.1\r\nHost: " + c.hubs[cur] + "\r\nAccept: text/event-stream\r\nLast-Event-ID: " + cursor + "\r\n\r\n"
	if _, err := io.WriteString(conn, req); err != nil {
		return false, err
	}
	br := bufio.NewReaderSize(conn, readBuf)
	chunked, err := readHeader(br)
	if err != nil {
		return false, err
	}
	c.connects++
	c.onHub = cur
	if first {
		c.firstOpen = time.Now()
		l.opened.Add(1)
		release()
	}
	l.open.Add(1)
	defer l.open.Add(-1)
	var body io.Reader = br
	if chunked {
		body = httputil.NewChunkedReader(br)
	}
	return true, c.read(body, l, retry)
}

// read parses frames until the stream ends.
func (c *streamClient) read(r io.Reader, l *streamLoad, retry *time.Duration) error {
	fr := sseframe.NewReader(r, readBuf)
	for {
		f, err := fr.Next()
		if err != nil {
			return err
		}
		if f.IsComment {
			continue // a heartbeat
		}
		if d, ok := f.Hint(); ok && d > 0 {
			*retry = d
		}
		c.dispatch(f, l, time.Now())
	}
}

// dispatch records one frame: a reset under the oldest id it names, an event under its id.
func (c *streamClient) dispatch(f *sseframe.Frame, l *streamLoad, now time.Time) {
	if string(f.Event) == "reset" {
		var r struct{ Topic, Reason, Oldest string }
		g := chaos.Got{Reset: true}
		if err := json.Unmarshal(f.Data, &r); err != nil || r.Topic == "" {
			c.malformed++
			return
		}
		g.Reason = r.Reason
		if r.Oldest != "" {
			var ok bool
			if g.ID, ok = parseID([]byte(r.Oldest)); !ok {
				c.malformed++
			}
		}
		c.recs = append(c.recs, g)
		return
	}
	if len(f.Event) == 0 {
		if f.HasID || f.HasData {
			c.malformed++ // the hub always names an event's type
		}
		return
	}
	if !f.HasID {
		return // ephemeral: nothing to check
	}
	id, ok := parseID(f.ID)
	if !ok {
		c.malformed++
		return
	}
	c.mu.Lock()
	if !c.last.Less(id) {
		l.bad.Add(1)
	}
	c.last = id
	c.mu.Unlock()
	c.recs = append(c.recs, chaos.Got{ID: id})
	c.lastAt = now
	l.delivered.Add(1)
	if sent := intAfter(f.Data, `"t":`); sent > 0 { // the publisher's send time, ns
		l.lat.add(now.UnixNano() - sent)
		l.wins.add(sent, now.UnixNano()-sent)
	}
}

// latWindows is latency by when the event was sent, in windows of latWindow from the first event seen: where in
// the run (which fault) the time went.
type latWindows struct {
	first atomic.Int64 // the first window's number (send time / latWindow), 0 until an event came
	h     [64]histogram
}

const latWindow = 5 * time.Second

func (w *latWindows) add(sentNs, latNs int64) {
	k := sentNs / int64(latWindow)
	w.first.CompareAndSwap(0, k)
	if i := k - w.first.Load(); i >= 0 && i < int64(len(w.h)) {
		w.h[i].add(latNs)
	}
}

// lastID is the newest id received, for the catch-up poll.
func (c *streamClient) lastID() hub.ID {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}
