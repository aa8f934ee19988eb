package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// frame is one SSE message (or comment) as a line-reading client sees it.
type frame struct {
	ID, Event, Data string
	Comment         string
	Retry           string
	HasID           bool
}

// sseClient reads one /events stream on its own goroutine, which ends with the stream.
type sseClient struct {
	t      testing.TB
	Status int
	Header http.Header
	Body   string // the error body, when Status is not 200
	frames chan frame
	ctx    context.Context
	cancel context.CancelFunc
	ended  chan struct{}
}

// openSSE connects to base+/events with the query and Last-Event-ID (when not empty).
func openSSE(t testing.TB, base string, query url.Values, lastEventID string) *sseClient {
	t.Helper()
	hdr := http.Header{}
	if lastEventID != "" {
		hdr.Set("Last-Event-ID", lastEventID)
	}
	return openSSEWith(t, base, query, hdr)
}

// openSSEWith is openSSE with request headers (credentials, Origin, X-Forwarded-For).
func openSSEWith(t testing.TB, base string, query url.Values, hdr http.Header) *sseClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/events?"+query.Encode(), nil)
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("GET /events?%s: %v", query.Encode(), err)
	}
	c := &sseClient{t: t, Status: resp.StatusCode, Header: resp.Header, frames: make(chan frame, 4096), ctx: ctx, cancel: cancel, ended: make(chan struct{})}
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

func (c *sseClient) read(body io.ReadCloser) {
	defer close(c.ended)
	defer close(c.frames)
	defer body.Close()
	r := bufio.NewReaderSize(body, 64<<10)
	var f frame
	var data []string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if f.Comment != "" || f.Retry != "" || f.Event != "" || data != nil || f.HasID {
				f.Data = strings.Join(data, "\n")
				if !c.emit(f) {
					return
				}
			}
			f, data = frame{}, nil
		case strings.HasPrefix(line, ":"):
			if !c.emit(frame{Comment: strings.TrimPrefix(line, ":")}) {
				return
			}
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "id":
				f.ID, f.HasID = value, true
			case "event":
				f.Event = value
			case "data":
				data = append(data, value)
			case "retry":
				f.Retry = value
			}
		}
	}
}

func (c *sseClient) emit(f frame) bool {
	select {
	case c.frames <- f:
		return true
	case <-c.ctx.Done():
		return false
	}
}

// Close ends the stream.
func (c *sseClient) Close() {
	c.cancel()
	<-c.ended
}

// next returns the next frame, or fails the test after within.
func (c *sseClient) next(within time.Duration) frame {
	c.t.Helper()
	select {
	case f, ok := <-c.frames:
		if !ok {
			c.t.Fatalf("stream ended while waiting for a frame")
		}
		return f
	case <-time.After(within):
		c.t.Fatalf("no frame within %v", within)
		return frame{}
	}
}

// nextEvent skips comments and retry hints and returns the next event.
func (c *sseClient) nextEvent(within time.Duration) frame {
	c.t.Helper()
	deadline := time.Now().Add(within)
	for {
		f := c.next(time.Until(deadline))
		if f.Comment == "" && f.Event != "" {
			return f
		}
	}
}

// events collects n events (skipping comments), failing after within.
func (c *sseClient) events(n int, within time.Duration) []frame {
	c.t.Helper()
	deadline := time.Now().Add(within)
	out := make([]frame, 0, n)
	for len(out) < n {
		select {
		case f, ok := <-c.frames:
			if !ok {
				c.t.Fatalf("stream ended after %d of %d events", len(out), n)
			}
			if f.Comment == "" && f.Event != "" {
				out = append(out, f)
			}
		case <-time.After(time.Until(deadline)):
			c.t.Fatalf("got %d of %d events within %v", len(out), n, within)
		}
	}
	return out
}

// waitEnd waits for the server to end the stream.
func (c *sseClient) waitEnd(within time.Duration) bool {
	select {
	case <-c.ended:
		return true
	case <-time.After(within):
		return false
	}
}

func topicQuery(topics ...string) url.Values {
	return url.Values{"topic": topics}
}

func data(i int) string { return fmt.Sprintf(`{"workflow":"wf-1","seq":%d}`, i) }
