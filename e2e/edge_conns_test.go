package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/pubsub"
)

// rawDial opens a TCP connection to addr from the loopback address from ("" for any), so a test can count as an
// address of its own, apart from the harness's own requests.
func rawDial(t testing.TB, addr, from string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 2 * time.Second}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s from %q: %v", addr, from, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// rawReply reads one response from c (status 0 when none came) and then whether the hub closed the connection,
// all within the deadline.
func rawReply(c net.Conn, within time.Duration) (status int, closed bool, err error) {
	_ = c.SetReadDeadline(time.Now().Add(within))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	switch {
	case err == nil:
		status = resp.StatusCode
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	case errors.Is(err, os.ErrDeadlineExceeded):
		return 0, false, err
	}
	_, err = br.ReadByte()
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed), err != nil && strings.Contains(err.Error(), "reset"):
		return status, true, nil
	case errors.Is(err, os.ErrDeadlineExceeded):
		return status, false, nil
	}
	return status, false, err
}

// A request whose body never comes holds nothing past limits.request_read_timeout: a publish body is answered 408
// when the deadline passes, and a request that declares a body where the route reads none (or is refused before
// reading it) is answered and closed at once. A GET with a body is refused. Headers that never end are cut too.
func TestRequestReadTimeoutUnsentBody(t *testing.T) {
	rs := rig.StartRedis(t)
	h := hubtest.Start(t, rs, "HUB_LIMITS_REQUEST_READ_TIMEOUT=1500ms")
	sec, _ := secureHub(t, rs, "HUB_LIMITS_REQUEST_READ_TIMEOUT=1500ms")
	const atOnce, atDeadline = 500 * time.Millisecond, 4 * time.Second
	head := func(method, path, extra string) string {
		return method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + extra + "\r\n"
	}
	const cl = "Content-Type: application/json\r\nContent-Length: 100\r\n"
	cases := []struct {
		name   string
		hub    *hubtest.Hub
		req    string
		status int           // 0: no response, only the close
		within time.Duration // at once (well under the 1.5s deadline), or at the deadline
	}{
		{"publish body never sent: 408 at the deadline", h, head("POST", "/publish", cl), 408, atDeadline},
		{"publish without a token, body never sent", sec, head("POST", "/publish", cl), 401, atOnce},
		{"GET /healthz declaring a body", h, head("GET", "/healthz", cl), 400, atOnce},
		{"GET /topics with a chunked body", h, head("GET", "/topics", "Transfer-Encoding: chunked\r\n"), 400, atOnce},
		{"GET a static file declaring a body", h, head("GET", "/", cl), 400, atOnce},
		{"GET /events declaring a body", h, head("GET", "/events?topic=a", cl), 400, atOnce},
		{"POST to a route without POST", h, head("POST", "/healthz", cl), 405, atOnce},
		{"headers never finished", h, "GET /topics HTTP/1.1\r\nHost: 127.0.0.1\r\n", 0, atDeadline},
	}
	for _, c := range cases {
		conn := rawDial(t, c.hub.Addr, "")
		if _, err := io.WriteString(conn, c.req); err != nil {
			t.Fatalf("%s: write: %v", c.name, err)
		}
		start := time.Now()
		status, closed, err := rawReply(conn, c.within)
		if status != c.status || !closed {
			t.Errorf("%s: answer %d, closed %v after %v (%v), want %d and the connection closed within %v",
				c.name, status, closed, time.Since(start).Round(time.Millisecond), err, c.status, c.within)
		}
	}
	fams := rig.Scrape(t, h.URL)
	rig.WantByLabel(t, fams, "hub_http_rejected_total", "reason", map[string]float64{"read_timeout": 1, "get_body": 4})
}

// The read deadline is for requests, not for a running stream: on a hub whose request_read_timeout is far shorter
// than the wait, a stream still gets an event published after it, over plain HTTP/1.1 (a detached stream), HTTP/1.1
// over TLS (which stays with net/http, where the deadline would end it) and HTTP/2.
func TestRequestReadTimeoutSparesRunningStream(t *testing.T) {
	rs := rig.StartRedis(t)
	certFile, keyFile, pool := selfSigned(t)
	prefix := fmt.Sprintf("rt%d", time.Now().UnixNano())
	env := map[string]string{"HUB_REDIS_URL": rs.URL(), "HUB_REDIS_PREFIX": prefix, "HUB_SSE_HEARTBEAT": "5s",
		"HUB_LIMITS_REQUEST_READ_TIMEOUT": "200ms"}
	plain := hubtest.RunDeployed(t, env)
	env["HUB_TLS_CERT_FILE"], env["HUB_TLS_KEY_FILE"] = certFile, keyFile
	tlsHub := hubtest.RunDeployed(t, env)
	h1 := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	h2 := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	defer h1.CloseIdleConnections()
	defer h2.CloseIdleConnections()
	pub := pubsub.NewPublisher(rs.Client(), pubsub.PublisherConfig{Prefix: prefix})
	for _, c := range []struct {
		name, base, proto string
		client            *http.Client
	}{
		{"HTTP/1.1", plain.URL, "HTTP/1.1", http.DefaultClient},
		{"HTTP/1.1 over TLS", tlsHub.URL, "HTTP/1.1", h1},
		{"HTTP/2", tlsHub.URL, "HTTP/2.0", h2},
	} {
		topic := "slow" + strings.ReplaceAll(c.proto, "/", "")
		s := openSSEClient(t, c.client, c.base+"/events?topic="+topic)
		if s.Proto != c.proto {
			t.Fatalf("%s: GET /events went over %s", c.name, s.Proto)
		}
		if s.WaitEnd(800 * time.Millisecond) { // four deadlines' worth of silence
			t.Errorf("%s: the stream ended during 800ms of silence, with limits.request_read_timeout 200ms", c.name)
			continue
		}
		id, err := pub.Publish(context.Background(), topic, "progress", []byte(hubtest.EventData(1)))
		if err != nil {
			t.Fatal(err)
		}
		if f := s.NextEvent(3 * time.Second); f.ID != id {
			t.Errorf("%s: after 800ms of silence: next event = %+v, want id %s", c.name, f, id)
		}
		s.Close()
	}
}

// Connections that carry no stream are bounded per address (limits.max_nonstream_connections_per_ip): the next is
// closed at once and counted. Streams do not count against it.
func TestNonStreamConnectionsPerAddress(t *testing.T) {
	rs := rig.StartRedis(t)
	h := hubtest.Start(t, rs, "HUB_LIMITS_MAX_NONSTREAM_CONNECTIONS_PER_IP=3")
	const from = "127.0.0.3"
	for i := range 2 {
		s := rawDial(t, h.Addr, from)
		_, _ = io.WriteString(s, "GET /events?topic=held HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		_ = s.SetReadDeadline(time.Now().Add(3 * time.Second))
		if line, err := bufio.NewReader(s).ReadString('\n'); err != nil || !strings.Contains(line, " 200 ") {
			t.Fatalf("stream %d from %s: %q, %v; want 200", i, from, line, err)
		}
	}
	var idle []net.Conn
	for range 3 {
		idle = append(idle, rawDial(t, h.Addr, from))
	}
	over := rawDial(t, h.Addr, from)
	if status, closed, err := rawReply(over, 2*time.Second); !closed {
		t.Errorf("fourth idle connection from %s: answer %d, closed %v (%v), want closed at once", from, status, closed, err)
	}
	_, _ = io.WriteString(idle[0], "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
	if status, _, err := rawReply(idle[0], 2*time.Second); status != http.StatusOK {
		t.Errorf("GET /healthz on an admitted connection = %d (%v), want 200", status, err)
	}
	if v, _ := rig.MetricValue(rig.Scrape(t, h.URL), "hub_http_rejected_total", "reason=nonstream_per_ip"); v != 1 {
		t.Errorf("hub_http_rejected_total{reason=nonstream_per_ip} = %v, want 1", v)
	}
}

// New connections, and streams, from one address are bounded per second (limits.connection_rate and
// connection_burst): over the burst a connection is closed at once and a stream is answered 429 with Retry-After.
// Behind a trusted proxy the proxy's connections are not limited, and a stream counts for its client address.
func TestConnectionAttemptRate(t *testing.T) {
	rs := rig.StartRedis(t)
	h := hubtest.Start(t, rs, "HUB_LIMITS_CONNECTION_RATE=0.1", "HUB_LIMITS_CONNECTION_BURST=3",
		"HUB_LIMITS_TRUSTED_PROXIES=127.0.0.1")
	const from = "127.0.0.4"
	for i := range 4 {
		c := rawDial(t, h.Addr, from)
		_, _ = io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
		status, closed, err := rawReply(c, 2*time.Second)
		want := http.StatusOK
		if i == 3 {
			want = 0
		}
		if status != want || !closed {
			t.Errorf("connection %d from %s: answer %d, closed %v (%v), want %d", i+1, from, status, closed, err, want)
		}
	}
	xff := http.Header{"X-Forwarded-For": {"198.51.100.9"}}
	for i := range 4 {
		c := rig.OpenStreamWith(t, h.URL, rig.TopicQuery("rate"), xff)
		c.Close()
		want := http.StatusOK
		if i == 3 {
			want = http.StatusTooManyRequests
		}
		if c.Status != want || (want == 429 && c.Header.Get("Retry-After") == "") {
			t.Errorf("stream %d for 198.51.100.9: %d %s (Retry-After %q), want %d", i+1, c.Status, c.Body,
				c.Header.Get("Retry-After"), want)
		}
	}
	if v, _ := rig.MetricValue(rig.Scrape(t, h.URL), "hub_http_rejected_total", "reason=conn_rate"); v != 2 {
		t.Errorf("hub_http_rejected_total{reason=conn_rate} = %v, want 2", v)
	}
}
