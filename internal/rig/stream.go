package rig

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/syncverse/hub/internal/sseframe"
)

// Frame is one SSE message (or comment) as a line-reading client sees it.
type Frame struct {
	ID, Event, Data string
	Comment         string
	Retry           string
	HasID           bool
}

// Stream reads one /events stream on its own goroutine, which ends with the stream.
type Stream struct {
	t      testing.TB
	Status int
	Header http.Header
	Proto  string // HTTP/1.1, HTTP/2.0
	Body   string // the error body, when Status is not 200
	frames chan Frame
	ctx    context.Context
	cancel context.CancelFunc
	ended  chan struct{}
	err    error // why reading ended (io.EOF: the server ended the body cleanly); set before ended is closed
}

// OpenStream connects to base+/events with the query and Last-Event-ID (when not empty).
func OpenStream(t testing.TB, base string, query url.Values, lastEventID string) *Stream {
	t.Helper()
	hdr := http.Header{}
	if lastEventID != "" {
		hdr.Set("Last-Event-ID", lastEventID)
	}
	return OpenStreamWith(t, base, query, hdr)
}

// OpenStreamWith is OpenStream with request headers (credentials, Origin, X-Forwarded-For).
func OpenStreamWith(t testing.TB, base string, query url.Values, hdr http.Header) *Stream {
	t.Helper()
	return GetStream(t, http.DefaultClient, base+"/events?"+query.Encode(), hdr)
}

// GetStream opens the stream at url through client (HTTP/2, TLS, ...). A stream that does not open has its Status and
// Body set and no frames.
func GetStream(t testing.TB, client *http.Client, url string, hdr http.Header) *Stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	resp, err := client.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("GET %s: %v", url, err)
	}
	return read(ctx, cancel, t, resp)
}

// ReadStream reads a stream whose response the test opened itself (to check its headers first, say). Close, or the end
// of the test, closes the body.
func ReadStream(t testing.TB, resp *http.Response) *Stream {
	ctx, cancel := context.WithCancel(context.Background())
	context.AfterFunc(ctx, func() { resp.Body.Close() })
	return read(ctx, cancel, t, resp)
}

func read(ctx context.Context, cancel context.CancelFunc, t testing.TB, resp *http.Response) *Stream {
	c := &Stream{t: t, Status: resp.StatusCode, Header: resp.Header, Proto: resp.Proto, frames: make(chan Frame, 4096),
		ctx: ctx, cancel: cancel, ended: make(chan struct{})}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		c.Body = string(b)
		close(c.ended)
		close(c.frames)
		return c
	}
	go c.read(resp.Body)
	t.Cleanup(c.Close)
	return c
}

func (c *Stream) read(body io.ReadCloser) {
	defer close(c.ended)
	defer close(c.frames)
	defer body.Close()
	r := sseframe.NewReader(body, 64<<10)
	for {
		f, err := r.Next()
		if err != nil {
			c.err = err
			return
		}
		out := Frame{ID: string(f.ID), Event: string(f.Event), Data: string(f.Data), Comment: string(f.Comment),
			Retry: string(f.Retry), HasID: f.HasID}
		if !c.emit(out) {
			return
		}
	}
}

func (c *Stream) emit(f Frame) bool {
	select {
	case c.frames <- f:
		return true
	case <-c.ctx.Done():
		return false
	}
}

// Frames is every frame as it comes, comments included; it is closed when the stream ends.
func (c *Stream) Frames() <-chan Frame { return c.frames }

// Err is why reading ended: io.EOF when the server ended the body cleanly. It waits for the reading goroutine to
// finish, so call it once the stream has ended (UntilEnd, WaitEnd).
func (c *Stream) Err() error {
	<-c.ended
	return c.err
}

// Close ends the stream.
func (c *Stream) Close() {
	c.cancel()
	<-c.ended
}

// Next returns the next frame, or fails the test after within.
func (c *Stream) Next(within time.Duration) Frame {
	c.t.Helper()
	select {
	case f, ok := <-c.frames:
		if !ok {
			c.t.Fatalf("stream ended while waiting for a frame")
		}
		return f
	case <-time.After(within):
		c.t.Fatalf("no frame within %v", within)
		return Frame{}
	}
}

// NextEvent skips comments and retry hints and returns the next event.
func (c *Stream) NextEvent(within time.Duration) Frame {
	c.t.Helper()
	deadline := time.Now().Add(within)
	for {
		if f := c.Next(time.Until(deadline)); c.isEvent(f) {
			return f
		}
	}
}

// isEvent reports whether f is an event, as opposed to a comment or a retry hint. A frame with an id or data but
// no event: is none of these (the hub names every event's type), so it fails the test rather than being skipped.
func (c *Stream) isEvent(f Frame) bool {
	c.t.Helper()
	if f.Event == "" && f.Comment == "" && (f.HasID || f.Data != "") {
		c.t.Fatalf("frame without event: %+v", f)
	}
	return f.Event != ""
}

// Events collects n events (skipping comments), failing after within.
func (c *Stream) Events(n int, within time.Duration) []Frame {
	c.t.Helper()
	deadline := time.Now().Add(within)
	out := make([]Frame, 0, n)
	for len(out) < n {
		select {
		case f, ok := <-c.frames:
			if !ok {
				c.t.Fatalf("stream ended after %d of %d events", len(out), n)
			}
			if c.isEvent(f) {
				out = append(out, f)
			}
		case <-time.After(time.Until(deadline)):
			c.t.Fatalf("got %d of %d events within %v", len(out), n, within)
		}
	}
	return out
}

// UntilEnd collects every frame until the server ends the stream, and fails the test if it is still open after
// within.
func (c *Stream) UntilEnd(within time.Duration) []Frame {
	c.t.Helper()
	timeout := time.After(within)
	var out []Frame
	for {
		select {
		case f, ok := <-c.frames:
			if !ok {
				return out
			}
			out = append(out, f)
		case <-timeout:
			c.t.Fatalf("stream still open after %v (%d frames so far)", within, len(out))
			return nil
		}
	}
}

// WaitEnd waits for the server to end the stream.
func (c *Stream) WaitEnd(within time.Duration) bool {
	select {
	case <-c.ended:
		return true
	case <-time.After(within):
		return false
	}
}

// TopicQuery is the query of a stream of topics.
func TopicQuery(topics ...string) url.Values {
	return url.Values{"topic": topics}
}
