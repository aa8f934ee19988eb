package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http/httputil"
	"sync"
	"sync/atomic"
	"time"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/sseframe"
)

// readBuf is the client's read size: a few frames at a time is plenty, and thousands of clients must stay cheap.
const readBuf = 2 << 10

// client is one SSE connection of the load: a goroutine, a small read buffer, and what it needs to check each
// delivery. It writes its HTTP/1.1 request itself and reads the frames in place (sseframe) so that the load
// generator costs the machine as little as possible next to the hub it measures.
type client struct {
	run  *load
	conn net.Conn

	start    time.Time // when it began to connect
	err      error     // why it stopped, when that was not the end of the run
	opened   time.Time // when the retry hint arrived: the stream is open
	first    time.Time // first event
	last     time.Time // when the want-th event arrived
	received int
	got      []uint64 // bit per event index
	lastSeq  []int64  // per publisher
	lastID   hub.ID
	dups     int
	disorder int
	resets   int
	foreign  int
	beats    int

	// the frame being counted
	frameID hub.ID
	hasID   bool
	p, s, t int64
}

// load is what the clients of one scenario share.
type load struct {
	host, path, lastEventID string
	perPub, pubs            int
	want                    int            // events each client waits for before it counts as done
	opened, done            sync.WaitGroup // every client calls each once
	dialing                 chan struct{}  // a slot per connection being opened, released once it is open
	lat                     *histogram     // publish-to-receive latency, nil when not measured
	meter                   *meter         // the run so far, for the progress line
	beats                   atomic.Int64
}

func (l *load) markOpened() {
	l.opened.Done()
	if l.dialing != nil {
		<-l.dialing
	}
}

func newClient(l *load) *client {
	c := &client{run: l, lastSeq: make([]int64, l.pubs)}
	for i := range c.lastSeq {
		c.lastSeq[i] = -1
	}
	if n := l.perPub * l.pubs; n > 0 {
		c.got = make([]uint64, (n+63)/64)
	}
	return c
}

// stream connects, reads until ctx ends or the hub closes the stream, and returns why it stopped. It calls
// l.opened.Done once (even on failure) and l.done.Done when want events arrived or it gives up.
func (c *client) stream(ctx context.Context, d *net.Dialer) error {
	openedDone, doneDone := false, false
	defer func() {
		if !openedDone {
			c.run.markOpened()
		}
		if !doneDone {
			c.run.done.Done()
		}
	}()
	conn, err := d.DialContext(ctx, "tcp", c.run.host)
	if err != nil {
		return err
	}
	c.conn = conn
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	defer conn.Close()
	req := "GET " + c.run.path + " HTTP/1.1\r\nHost: " + c.run.host + "\r\nAccept: text/event-stream\r\n"
	if c.run.lastEventID != "" {
		req += "Last-Event-ID: " + c.run.lastEventID + "\r\n"
	}
	if _, err := conn.Write([]byte(req + "\r\n")); err != nil {
		return err
	}
	br := bufio.NewReaderSize(conn, readBuf)
	chunked, err := readHeader(br)
	if err != nil {
		return err
	}
	var body io.Reader = br // a body without chunks runs to the end of the connection
	if chunked {
		body = httputil.NewChunkedReader(br)
	}
	err = c.consume(body, func(now time.Time) {
		if !openedDone && !c.opened.IsZero() {
			openedDone = true
			c.run.markOpened()
		}
		if !doneDone && c.run.want > 0 && c.received >= c.run.want {
			doneDone = true
			c.last = now
			c.run.done.Done()
		}
	})
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// readHeader reads the response head and reports whether the body is chunked.
func readHeader(br *bufio.Reader) (chunked bool, err error) {
	status, err := br.ReadSlice('\n')
	if err != nil {
		return false, fmt.Errorf("read status: %w", err)
	}
	if !bytes.HasPrefix(status, []byte("HTTP/1.1 200")) {
		return false, fmt.Errorf("hub answered %q", bytes.TrimSpace(status))
	}
	for {
		h, err := br.ReadSlice('\n')
		if err != nil {
			return false, fmt.Errorf("read header: %w", err)
		}
		h = bytes.TrimRight(h, "\r\n")
		if len(h) == 0 {
			return chunked, nil
		}
		if k, v, ok := bytes.Cut(h, []byte(":")); ok && bytes.EqualFold(k, []byte("Transfer-Encoding")) {
			chunked = bytes.Contains(bytes.ToLower(v), []byte("chunked"))
		}
	}
}

var errEndOfStream = errors.New("the hub ended the stream")

// consume reads the SSE body's frames and counts each, calling after once a frame is counted. It returns
// errEndOfStream when the body ends, or the read error.
func (c *client) consume(body io.Reader, after func(now time.Time)) error {
	r := sseframe.NewReader(body, readBuf)
	for {
		f, err := r.Next()
		if err == io.EOF {
			return errEndOfStream
		}
		if err != nil {
			return err
		}
		now := time.Now()
		switch {
		case f.IsComment:
			c.beats++
			c.run.beats.Add(1)
		case string(f.Event) == "reset":
			c.resets++
		case f.HasData:
			c.hasID = false
			if f.HasID {
				c.frameID, c.hasID = parseID(f.ID)
			}
			c.p, c.s, c.t = intAfter(f.Data, `"p":`), intAfter(f.Data, `"s":`), intAfter(f.Data, `"t":`)
			c.event(now)
		case len(f.Retry) > 0:
			if c.opened.IsZero() {
				c.opened = now
				c.run.meter.opened()
			}
		}
		after(now)
	}
}

// event checks one delivered event: its stream id must grow, each publisher's sequence must grow, and no event
// may come twice.
func (c *client) event(now time.Time) {
	if c.hasID {
		if !c.lastID.Less(c.frameID) {
			c.disorder++
			c.run.meter.violation()
		}
		c.lastID = c.frameID
	}
	if c.p < 0 || c.s < 0 || int(c.p) >= c.run.pubs || int(c.s) >= c.run.perPub {
		c.foreign++
		return
	}
	idx := int(c.p)*c.run.perPub + int(c.s)
	if c.got[idx/64]&(1<<(idx%64)) != 0 {
		c.dups++
		c.run.meter.violation()
		return
	}
	c.got[idx/64] |= 1 << (idx % 64)
	if c.s <= c.lastSeq[c.p] {
		c.disorder++
		c.run.meter.violation()
	}
	c.lastSeq[c.p] = c.s
	if c.received == 0 {
		c.first = now
	}
	c.received++
	c.run.meter.delivered()
	if c.run.lat != nil && c.t > 0 {
		c.run.lat.add(now.UnixNano() - c.t)
	}
}

// parseID is hub.ParseID's fast path for the load client, which reads every frame of thousands of streams: it
// works on the read buffer's bytes, where hub.ParseID would need a string (an allocation per frame, which would
// then be measured as the hub's). It accepts what hub.ParseID accepts, and TestParseIDAgreesWithHub holds it to that.
func parseID(b []byte) (hub.ID, bool) {
	ms, seq, ok := bytes.Cut(b, []byte("-"))
	if !ok || len(ms) > 20 || len(seq) > 20 {
		return hub.ID{}, false
	}
	m, ok1 := parseUint(ms)
	s, ok2 := parseUint(seq)
	return hub.ID{Ms: m, Seq: s}, ok1 && ok2
}

func parseUint(b []byte) (uint64, bool) {
	var n uint64
	for _, ch := range b {
		d := uint64(ch - '0')
		if ch < '0' || ch > '9' || n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, len(b) > 0
}

// intAfter reads the whole number that follows key in b, or -1.
func intAfter(b []byte, key string) int64 {
	i := bytes.Index(b, []byte(key))
	if i < 0 {
		return -1
	}
	var n int64
	digits := 0
	for _, ch := range b[i+len(key):] {
		if ch < '0' || ch > '9' {
			break
		}
		n = n*10 + int64(ch-'0')
		digits++
	}
	if digits == 0 {
		return -1
	}
	return n
}

// lost counts the events published successfully that the client never received.
func (c *client) lost(ok []bool) int {
	n := 0
	for i, sent := range ok {
		if sent && c.got[i/64]&(1<<(i%64)) == 0 {
			n++
		}
	}
	return n
}
