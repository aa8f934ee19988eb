package limits

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

func TestHosts(t *testing.T) {
	h, err := NewHosts([]string{"hub.internal", " Console.Example.com:8443 "})
	if err != nil {
		t.Fatal(err)
	}
	for host, ok := range map[string]bool{
		"": true, "localhost": true, "localhost:8080": true, "LOCALHOST:1": true, "app.localhost:80": true,
		"127.0.0.1": true, "127.9.9.9:80": true, "[::1]:8080": true, "::1": true, "[::ffff:127.0.0.1]:80": true,
		"hub.internal": true, "hub.internal:1234": true, "console.example.com:8443": true,
		"console.example.com": false, "console.example.com:9000": false, "evil.example": false, "localhost.evil.example": false,
		"10.0.0.1:8080": true, "[2001:db8::2]:80": true, "127.0.0.1.nip.io": false, "10.0.0.1.evil.example": false, "localhost:0": false, "[::1": false,
	} {
		err := h.Check(host)
		var ref *Refusal
		if ok && err != nil || !ok && (!errors.As(err, &ref) || ref.Code != 403 || ref.Reason != ReasonHost) {
			t.Errorf("Check(%q) = %v, want allowed %v", host, err, ok)
		}
	}
	if any, _ := NewHosts([]string{"*"}); any.Check("evil.example") != nil {
		t.Errorf(`with "*": Check(evil.example) refused`)
	}
	for _, bad := range []string{"http://hub", "hub/x", "hub:99999", "hub:x", "a b"} {
		if _, err := NewHosts([]string{bad}); err == nil {
			t.Errorf("NewHosts(%q) = nil error", bad)
		}
	}
}

// FuzzHostsCheck: whatever the Host, Check answers (no panic), and admits a name only when it is an address,
// localhost or listed.
func FuzzHostsCheck(f *testing.F) {
	for _, s := range []string{"localhost:80", "[::1]:1", "hub.internal", "x.localhost", "[", ":", "a:b:c", "]:80"} {
		f.Add(s)
	}
	h, _ := NewHosts([]string{"hub.internal"})
	f.Fuzz(func(t *testing.T, host string) {
		if h.Check(host) != nil || host == "" {
			return
		}
		name, _, err := splitHost(strings.ToLower(host))
		_, aerr := netip.ParseAddr(name)
		if err != nil || !(aerr == nil || name == "localhost" ||
			strings.HasSuffix(name, ".localhost") || name == "hub.internal") {
			t.Fatalf("Check(%q) admitted a name that is neither localhost nor listed", host)
		}
	})
}

// fakeConn is a connection with a remote address, as ConnState sees it.
type fakeConn struct {
	net.Conn
	remote string
	closed bool
}

func (c *fakeConn) RemoteAddr() net.Addr {
	return net.TCPAddrFromAddrPort(netip.MustParseAddrPort(c.remote))
}
func (c *fakeConn) Close() error { c.closed = true; return nil }

func TestPeers(t *testing.T) {
	var refused []string
	proxy, _ := ParseProxies([]string{"10.0.0.1"})
	p := NewPeers(2, NewConnRate(0.01, 3), proxy, func(r string) { refused = append(refused, r) })
	a := netip.MustParseAddr("192.0.2.1")
	conn := func(remote string) *fakeConn {
		c := &fakeConn{remote: remote}
		p.ConnState(c, http.StateNew)
		return c
	}
	c1, c2 := conn("192.0.2.1:1"), conn("192.0.2.1:2")
	if c3 := conn("192.0.2.1:3"); !c3.closed || c1.closed || c2.closed {
		t.Fatalf("third connection without a stream: closed %v (first two %v %v), want only it closed", c3.closed, c1.closed, c2.closed)
	}
	// A stream on c1 takes it out of the count until its handler returns.
	r := httptest.NewRequest(http.MethodGet, "/events", nil)
	r = r.WithContext(p.ConnContext(context.Background(), c1))
	end := p.Stream(r)
	if held := p.Held(a); held != 1 {
		t.Errorf("Held during a stream = %d, want 1", held)
	}
	end()
	end()
	if held := p.Held(a); held != 2 {
		t.Errorf("Held after the stream's handler returned (twice) = %d, want 2", held)
	}
	end = p.Stream(r)
	p.ConnState(c1, http.StateHijacked) // an HTTP/1.1 stream takes its connection over
	end()
	p.ConnState(c2, http.StateClosed)
	if held := p.Held(a); held != 0 {
		t.Errorf("Held after hijack and close = %d, want 0", held)
	}
	if c := conn("192.0.2.1:4"); !c.closed {
		t.Errorf("fourth connection at once: open, want closed by connection_rate (burst 3)")
	}
	for range 10 {
		if c := conn("10.0.0.1:5"); c.closed {
			t.Fatalf("a trusted proxy's connection was closed")
		}
	}
	if strings.Join(refused, ",") != ReasonNonStreamPerIP+","+ReasonConnRate {
		t.Errorf("refusals = %v, want [%s %s]", refused, ReasonNonStreamPerIP, ReasonConnRate)
	}
}
