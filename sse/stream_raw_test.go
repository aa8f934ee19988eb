package sse

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/hub/hubtest"
	"github.com/syncverse/hub/internal/rig"
)

// rawGET sends a GET for path on a connection of its own, closed at the end of the test, and reads nothing.
func (e *env) rawGET(t *testing.T, path string) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", e.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	if _, err := io.WriteString(nc, "GET "+path+" HTTP/1.1\r\nHost: hub\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	return nc
}

// goroutinesIn counts the goroutines whose stack holds fn.
func goroutinesIn(fn string) int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte(fn)) {
			count++
		}
	}
	return count
}

// An idle HTTP/1.1 stream keeps no goroutine: no handler, no writer, and on Linux no reader either (the wheel's
// epoll set notices the client leaving); elsewhere one reader parked in a 1-byte read.
func TestRawIdleStreamsKeepNoGoroutine(t *testing.T) {
	e := newEnv(t, Config{})
	const n = 20
	streams := make([]*rig.Stream, n)
	for i := range streams {
		streams[i] = e.open(t, "topic=a", "0-0") // from the start: a fresh stream would skip events sent before it is live
		streams[i].Next(wait)                    // the retry hint
	}
	for _, ev := range e.store.Add("a", 3) {
		e.hub.Broadcast(ev)
	}
	for _, s := range streams {
		for range 3 {
			s.NextEvent(wait)
		}
	}
	rig.Eventually(t, wait, "raw streams still have writers or handlers", func() bool {
		return goroutinesIn("sse.(*rawStream).run") == 0 && goroutinesIn("sse.(*Handler).ServeHTTP") == 0
	})
	want := n
	if runtime.GOOS == "linux" {
		want = 0
	}
	if got := goroutinesIn("sse.(*rawStream).read"); got != want {
		t.Errorf("%d readers for %d idle streams, want %d", got, n, want)
	}
	for _, s := range streams {
		s.Close()
	}
	rig.Eventually(t, wait, "streams still open after their clients went away", func() bool {
		e.hd.reg.mu.Lock()
		defer e.hd.reg.mu.Unlock()
		return e.hd.reg.wheel.n == 0
	})
}

// Bytes a client sends after its request are dropped; only the end of its side ends the stream.
func TestClientBytesAfterTheRequestDoNotEndTheStream(t *testing.T) {
	e := newEnv(t, Config{})
	nc := e.rawGET(t, "/events?topic=a&last_event_id=0-0")
	readUntil := func(want string) {
		t.Helper()
		_ = nc.SetReadDeadline(time.Now().Add(wait))
		var got []byte
		buf := make([]byte, 4096)
		for !bytes.Contains(got, []byte(want)) {
			n, err := nc.Read(buf)
			if err != nil {
				t.Fatalf("waiting for %q: %v (got %q)", want, err, got)
			}
			got = append(got, buf[:n]...)
		}
	}
	readUntil("retry: ")
	time.Sleep(50 * time.Millisecond) // live by now
	if _, err := io.WriteString(nc, "GET /again HTTP/1.1\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	e.hub.Broadcast(e.store.Add("a", 1)[0])
	readUntil("id: 1-0")
}

// A raw stream's writes do not wait, so they carry no deadline: one armed during the replay must not refuse
// them once it has passed.
func TestRawStreamOutlivesItsWriteTimeout(t *testing.T) {
	e := newEnv(t, Config{WriteTimeout: 50 * time.Millisecond})
	s := e.open(t, "topic=a", "0-0")
	e.hub.Broadcast(e.store.Add("a", 1)[0])
	s.NextEvent(wait)
	time.Sleep(200 * time.Millisecond)
	e.hub.Broadcast(e.store.Add("a", 1)[0])
	if f := s.NextEvent(wait); f.ID != "2-0" {
		t.Fatalf("after 4 write timeouts of quiet: %v, want event 2-0", f)
	}
}

// Clients that stop reading fill their sockets; their streams move off the shared workers to goroutines of their
// own, so however many stall, a reading client gets every event, in order.
func TestStalledClientsDoNotHoldTheWorkers(t *testing.T) {
	e := newEnv(t, Config{})
	for range runtime.GOMAXPROCS(0) + 2 {
		e.rawGET(t, "/events?topic=a&last_event_id=0-0") // and never read
	}
	s := e.open(t, "topic=a", "0-0")
	big := strings.Repeat("x", 16<<10)
	const n = 400 // 6.4 MB: more than a loopback socket pair buffers, less than 256 queued events hold
	for i := range n {
		ev := e.store.AddData("a", func(n uint64) []byte { return []byte(`{"n":` + strconv.Itoa(int(n)) + `,"pad":"` + big + `"}`) })
		e.hub.Broadcast(ev)
		if f := s.NextEvent(wait); f.ID != ev.IDText {
			t.Fatalf("event %d: reading client got %v, want %s", i, f, ev.IDText)
		}
	}
	if n := goroutinesIn("sse.(*rawStream).runOwn"); n == 0 {
		t.Errorf("no stream moved to a goroutine of its own: the stalled clients' sockets never filled")
	}
}

// A shutdown that runs out of time cuts the streams still open and waits for their goroutines.
func TestShutdownCutsStreamsWhenTimeRunsOut(t *testing.T) {
	h := hub.New(hubtest.NewStore(), hub.Config{})
	hd := New(h, Config{})
	srv := httptest.NewServer(hd)
	defer srv.Close()
	defer h.Close()
	var bodies []io.ReadCloser
	for range 3 {
		resp, err := http.Get(srv.URL + "/events?topic=a")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if _, err := resp.Body.Read(make([]byte, 64)); err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, resp.Body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := hd.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown with the hub still open = %v, want context.DeadlineExceeded", err)
	}
	for i, b := range bodies {
		if _, err := io.ReadAll(b); err != nil && !strings.Contains(err.Error(), "unexpected EOF") {
			t.Errorf("stream %d after the cut: %v", i, err)
		}
	}
	// A goroutine counted done may still be returning: allow it that moment.
	rig.Eventually(t, wait, "stream goroutines left after Shutdown returned", func() bool { return goroutinesIn("sse.(*rawStream)") == 0 })
}

func TestChunkInPlace(t *testing.T) {
	for _, n := range []int{1, 15, 16, 255, 256, 4095, 70000, 1 << 20} {
		payload := bytes.Repeat([]byte{'x'}, n)
		buf := append(make([]byte, chunkRoom, chunkRoom+n), payload...)
		_, c := chunkInPlace(buf)
		got, err := io.ReadAll(httputil.NewChunkedReader(io.MultiReader(bytes.NewReader(c), bytes.NewReader(lastChunk))))
		if err != nil || !bytes.Equal(got, payload) {
			t.Fatalf("chunk of %d bytes read back as %d bytes, %v", n, len(got), err)
		}
	}
}
