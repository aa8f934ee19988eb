package sse

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/hub"
)

// env is a hub with an in-memory store behind an /events handler on a real HTTP server.
type env struct {
	store  *memStore
	hub    *hub.Hub
	srv    *httptest.Server
	hd     *Handler
	client *http.Client
	cfg    Config
}

func newEnv(t *testing.T, cfg Config) *env {
	t.Helper()
	st := newMemStore()
	h := hub.New(st, hub.Config{})
	hd := New(h, cfg)
	srv := httptest.NewServer(hd)
	tr := &http.Transport{}
	e := &env{store: st, hub: h, srv: srv, hd: hd, client: &http.Client{Transport: tr}, cfg: cfg}
	t.Cleanup(func() {
		h.Close() // ends the streams, so the server can close
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := hd.Shutdown(ctx); err != nil {
			t.Errorf("streams still open 5s after the hub closed: %v", err)
		}
		tr.CloseIdleConnections()
	})
	return e
}

// frame is one SSE frame as read off the wire: fields by name, or a comment.
type frame struct {
	id, event, retry, comment string
	hasID                     bool
	data                      []string
}

func (f frame) String() string {
	switch {
	case f.comment != "":
		return ":" + f.comment
	case f.retry != "":
		return "retry:" + f.retry
	}
	return "id=" + f.id + " event=" + f.event + " data=" + strings.Join(f.data, "\\n")
}

// stream is an open /events response read frame by frame on its own goroutine.
type stream struct {
	t      *testing.T
	resp   *http.Response
	frames chan frame
	done   chan struct{}
}

func (e *env) get(t *testing.T, query string, header http.Header) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.srv.URL+"/events?"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatalf("GET /events?%s: %v", query, err)
	}
	return resp
}

func (e *env) open(t *testing.T, query string, lastEventID string) *stream {
	t.Helper()
	h := http.Header{}
	if lastEventID != "" {
		h.Set("Last-Event-ID", lastEventID)
	}
	resp := e.get(t, query, h)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("GET /events?%s (Last-Event-ID %q) = %d %s, want 200", query, lastEventID, resp.StatusCode, b)
	}
	s := &stream{t: t, resp: resp, frames: make(chan frame, 4096), done: make(chan struct{})}
	go s.read()
	t.Cleanup(s.close)
	return s
}

func (s *stream) read() {
	defer close(s.done)
	defer close(s.frames)
	r := bufio.NewReader(s.resp.Body)
	var f frame
	started := false
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			if started {
				s.frames <- f
			}
			f, started = frame{}, false
			continue
		}
		started = true
		name, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch name {
		case "":
			f.comment = value
		case "id":
			f.id, f.hasID = value, true
		case "event":
			f.event = value
		case "retry":
			f.retry = value
		case "data":
			f.data = append(f.data, value)
		}
	}
}

func (s *stream) close() {
	s.resp.Body.Close()
	<-s.done
}

// next returns the next frame, failing the test if none comes within d or the stream ends.
func (s *stream) next(d time.Duration) frame {
	s.t.Helper()
	select {
	case f, ok := <-s.frames:
		if !ok {
			s.t.Fatalf("stream ended, want another frame")
		}
		return f
	case <-time.After(d):
		s.t.Fatalf("no frame within %v", d)
	}
	return frame{}
}

// nextEvent skips heartbeats and retry hints.
func (s *stream) nextEvent(d time.Duration) frame {
	s.t.Helper()
	deadline := time.Now().Add(d)
	for {
		f := s.next(time.Until(deadline))
		if f.comment == "" && f.retry == "" {
			return f
		}
	}
}

// ended waits for the end of the stream and returns the frames that came before it.
func (s *stream) ended(d time.Duration) ([]frame, bool) {
	var got []frame
	timeout := time.After(d)
	for {
		select {
		case f, ok := <-s.frames:
			if !ok {
				return got, true
			}
			got = append(got, f)
		case <-timeout:
			return got, false
		}
	}
}

func retryMillis(t *testing.T, f frame) time.Duration {
	t.Helper()
	n, err := strconv.Atoi(f.retry)
	if err != nil {
		t.Fatalf("frame %v is not a retry hint", f)
	}
	return time.Duration(n) * time.Millisecond
}
