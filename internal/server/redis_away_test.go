package server

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/internal/rig"
)

// rawGet sends GET path (header: more header lines, each ending in CRLF) on a connection of its own that gives up
// after within. It returns the connection, for the caller to close, the answer's reader and when the request went out.
func rawGet(t *testing.T, addr, path, header string, within time.Duration) (net.Conn, *bufio.Reader, time.Time) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	_ = conn.SetDeadline(started.Add(within))
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\n", path, header)
	return conn, bufio.NewReader(conn), started
}

// streamStart opens GET path raw and reads until it has seen the status line, the retry hint and a heartbeat, or
// until within; it returns what it saw and when each came.
func streamStart(t *testing.T, addr, path, header string, within time.Duration) (status string, retry, beat time.Duration) {
	t.Helper()
	conn, br, started := rawGet(t, addr, path, header, within)
	defer conn.Close()
	status, _ = br.ReadString('\n')
	for retry == 0 || beat == 0 {
		line, err := br.ReadString('\n')
		if err != nil {
			break
		}
		switch {
		case strings.HasPrefix(line, "retry:") && retry == 0:
			retry = time.Since(started)
		case strings.HasPrefix(line, ":heartbeat") && beat == 0:
			beat = time.Since(started)
		}
	}
	return strings.TrimSpace(status), retry, beat
}

// readyzWithin asks /readyz and returns its status and how long it took.
func readyzWithin(t *testing.T, addr string) (string, time.Duration) {
	t.Helper()
	conn, br, started := rawGet(t, addr, "/readyz", "", 15*time.Second)
	defer conn.Close()
	line, _ := br.ReadString('\n')
	return strings.TrimSpace(line), time.Since(started)
}

// A Redis that accepts connections but never replies (a black hole: the proxy stalls), a Redis that is down from
// the start, and one that goes down mid-stream: /readyz answers 503 within its own deadline (800 ms, checked here
// with slack for a loaded machine), and /events answers its status line and retry hint at once and then heartbeats,
// including a resume whose replay must wait for Redis.
func TestRedisAwayProbesAndStreamsAnswer(t *testing.T) {
	const slack = 2 * time.Second
	rs := rig.StartRedisWith(t, rig.RedisOptions{})
	link := rig.StartLink(t, rs.Addr, 0)
	rdb := redis.NewClient(&redis.Options{Addr: link.Addr})
	t.Cleanup(func() { rdb.Close() })
	e := newEdgeOn(t, rdb, "HUB_SSE_HEARTBEAT=1s")
	id := e.publish(t, "t", "progress", `{"n":1}`)
	// Ready once its subscriber is up and a ping answers within 800 ms: on a loaded machine, not at the first ask.
	rig.Eventually(t, 10*time.Second, "/readyz answering 200 with Redis up", func() bool {
		st, _ := readyzWithin(t, e.Addr)
		return strings.Contains(st, " 200 ")
	})
	checkStreams := func(when string) {
		t.Helper()
		for _, s := range []struct{ path, header string }{
			{"/events?topic=t", ""},
			{"/events?topic=t", "Last-Event-ID: " + id + "\r\n"},
			{"/events?topic=t&history=5", ""},
			{"/events?topic=fresh", "Last-Event-ID: 0-0\r\n"},
		} {
			status, retry, beat := streamStart(t, e.Addr, s.path, s.header, 10*time.Second)
			if !strings.Contains(status, " 200 ") || retry == 0 || retry > slack || beat == 0 || beat > time.Second+slack {
				t.Errorf("%s: GET %s (%q) = %q, retry after %v, first heartbeat after %v; want 200 and the retry hint at once, a heartbeat within the period",
					when, s.path, strings.TrimSpace(s.header), status, retry, beat)
			}
		}
	}
	link.Stall()
	for range 3 {
		if st, took := readyzWithin(t, e.Addr); !strings.Contains(st, " 503 ") || took > readyWithin+slack {
			t.Errorf("black-holed Redis: /readyz = %q after %v; want 503 within %v", st, took, readyWithin)
		}
	}
	checkStreams("black-holed Redis")
	link.Resume()

	link.Close() // down: connections refused from now on
	for range 2 {
		if st, took := readyzWithin(t, e.Addr); !strings.Contains(st, " 503 ") || took > readyWithin+slack {
			t.Errorf("Redis down: /readyz = %q after %v; want 503 within %v", st, took, readyWithin)
		}
	}
	checkStreams("Redis down")
}

// A hub whose Redis is down from the start answers its probes and streams the same way.
func TestRedisDownAtStartProbesAndStreamsAnswer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { rdb.Close() })
	e := newEdgeOn(t, rdb, "HUB_SSE_HEARTBEAT=1s")
	if st, took := readyzWithin(t, e.Addr); !strings.Contains(st, " 503 ") || took > readyWithin+2*time.Second {
		t.Errorf("/readyz with Redis down at start = %q after %v; want 503 at once", st, took)
	}
	status, retry, beat := streamStart(t, e.Addr, "/events?topic=t", "Last-Event-ID: 0-0\r\n", 10*time.Second)
	if !strings.Contains(status, " 200 ") || retry == 0 || beat == 0 || beat > 3*time.Second {
		t.Errorf("GET /events with Redis down at start = %q, retry after %v, heartbeat after %v; want 200, retry, heartbeats", status, retry, beat)
	}
}
