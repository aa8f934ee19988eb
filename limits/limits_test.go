package limits

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestClientIP(t *testing.T) {
	proxies, err := ParseProxies([]string{"10.0.0.0/8", "127.0.0.1", "::1"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		p      Proxies
		remote string
		xff    []string
		want   string
	}{
		{"no proxies: header ignored", Proxies{}, "203.0.113.5:1000", []string{"1.2.3.4"}, "203.0.113.5"},
		{"untrusted peer: header ignored", proxies, "203.0.113.5:1000", []string{"1.2.3.4"}, "203.0.113.5"},
		{"trusted peer", proxies, "127.0.0.1:1000", []string{"198.51.100.7"}, "198.51.100.7"},
		{"spoofed left entry", proxies, "127.0.0.1:1000", []string{"6.6.6.6, 198.51.100.7"}, "198.51.100.7"},
		{"chain of proxies", proxies, "127.0.0.1:1000", []string{"198.51.100.7, 10.1.1.1", "10.2.2.2"}, "198.51.100.7"},
		{"all trusted", proxies, "127.0.0.1:1000", []string{"10.1.1.1"}, "10.1.1.1"},
		{"garbage entry", proxies, "127.0.0.1:1000", []string{"6.6.6.6, garbage, 10.1.1.1"}, "10.1.1.1"},
		{"no header", proxies, "127.0.0.1:1000", nil, "127.0.0.1"},
		{"ipv6 peer", proxies, "[::1]:1000", []string{"[2001:db8::1]:443"}, "2001:db8::1"},
		{"mapped v4", proxies, "[::ffff:127.0.0.1]:1000", []string{"198.51.100.7"}, "198.51.100.7"},
	}
	for _, c := range cases {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = c.remote
		r.Header["X-Forwarded-For"] = c.xff
		if got := c.p.ClientIP(r); got.String() != c.want {
			t.Errorf("%s: ClientIP = %v, want %s", c.name, got, c.want)
		}
	}
	if _, err := ParseProxies([]string{"10.0.0.0/33"}); err == nil {
		t.Errorf("ParseProxies(10.0.0.0/33) = nil error")
	}
}

// FuzzClientIP: a client behind no trusted proxy is always its peer, whatever it writes in X-Forwarded-For, and
// the answer is always the peer or one of the header's entries.
func FuzzClientIP(f *testing.F) {
	f.Add("127.0.0.1:1", "1.2.3.4, 10.0.0.1")
	f.Add("203.0.113.9:1", "::1,,x")
	proxies, _ := ParseProxies([]string{"127.0.0.0/8", "10.0.0.0/8"})
	f.Fuzz(func(t *testing.T, remote, xff string) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = remote
		r.Header.Set("X-Forwarded-For", xff)
		got := proxies.ClientIP(r)
		peer, err := netip.ParseAddrPort(remote)
		if err != nil {
			if got.IsValid() {
				t.Fatalf("ClientIP with RemoteAddr %q = %v, want invalid", remote, got)
			}
			return
		}
		if !proxies.trusted(peer.Addr().Unmap()) && got != peer.Addr().Unmap() {
			t.Fatalf("ClientIP(%q, XFF %q) = %v, want the untrusted peer", remote, xff, got)
		}
		if got == peer.Addr().Unmap() {
			return
		}
		for _, hop := range strings.Split(xff, ",") {
			if a, ok := parseHop(hop); ok && a == got {
				return
			}
		}
		t.Fatalf("ClientIP(%q, XFF %q) = %v, which neither the peer nor the header named", remote, xff, got)
	})
}

func TestConns(t *testing.T) {
	a, b := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2")
	c := NewConns(3, 2)
	r1, _ := c.Acquire(a)
	r2, _ := c.Acquire(a)
	_, err := c.Acquire(a)
	var ref *Refusal
	if !errors.As(err, &ref) || ref.Code != 429 || ref.Reason != ReasonConnPerIP {
		t.Fatalf("Acquire(a) third = %v, want 429 %s", err, ReasonConnPerIP)
	}
	r3, _ := c.Acquire(b)
	if _, err := c.Acquire(b); !errors.As(err, &ref) || ref.Code != 503 || ref.Reason != ReasonConnLimit {
		t.Fatalf("Acquire(b) over the global limit = %v, want 503 %s", err, ReasonConnLimit)
	}
	r1()
	r1() // a second release must not free a second slot
	if n := c.Open(); n != 2 {
		t.Fatalf("Open() after one release twice = %d, want 2", n)
	}
	r2()
	r3()
	if n := c.Open(); n != 0 || len(c.byIP) != 0 {
		t.Fatalf("after every release: Open() = %d, %d addresses tracked, want 0, 0", n, len(c.byIP))
	}
	v6 := NewConns(0, 1)
	_, _ = v6.Acquire(netip.MustParseAddr("2001:db8::1"))
	if _, err := v6.Acquire(netip.MustParseAddr("2001:db8::2")); err == nil {
		t.Errorf("a second address of the same /64 was admitted, want it counted with the first")
	}
}

// clockedRate is NewRate on a clock that reads *now, which the test moves by hand.
func clockedRate(perSecond float64, burst int, now *time.Time) *Rate {
	r := NewRate(perSecond, burst)
	r.now = func() time.Time { return *now }
	return r
}

func TestRate(t *testing.T) {
	now := time.Unix(1000, 0)
	r := clockedRate(2, 3, &now)
	for i := range 3 {
		if err := r.Allow("k"); err != nil {
			t.Fatalf("Allow #%d within the burst = %v", i, err)
		}
	}
	err := r.Allow("k")
	var ref *Refusal
	if !errors.As(err, &ref) || ref.Code != 429 || ref.RetryAfter != 500*time.Millisecond {
		t.Fatalf("Allow over the burst = %v, want 429 retry in 500ms", err)
	}
	h := http.Header{}
	ref.SetHeaders(h)
	if h.Get("Retry-After") != "1" {
		t.Errorf("Retry-After = %q, want 1 (rounded up)", h.Get("Retry-After"))
	}
	if err := r.Allow("other"); err != nil {
		t.Errorf("another key = %v, want its own bucket", err)
	}
	now = now.Add(500 * time.Millisecond)
	if err := r.Allow("k"); err != nil {
		t.Errorf("Allow after the hinted wait = %v", err)
	}
	if NewRate(0, 1).Allow("k") != nil {
		t.Errorf("a zero rate limited something")
	}
}

func TestRateForgetsIdleKeys(t *testing.T) {
	now := time.Unix(1000, 0)
	r := clockedRate(1000, 1, &now)
	for i := range 5000 {
		_ = r.Allow(string(rune(i)))
		now = now.Add(time.Millisecond)
	}
	if len(r.buckets) > 2100 {
		t.Errorf("%d buckets kept for 5000 keys used once, want the full ones forgotten", len(r.buckets))
	}
}

func TestCORS(t *testing.T) {
	c, err := NewCORS([]string{"https://console.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, method, origin, site string
		preflight                  bool
		done                       bool
		status                     int // 0: allowed
		acao                       string
	}{
		{"no origin", "POST", "", "", false, false, 0, ""},
		{"listed preflight", "OPTIONS", "https://console.example.com", "cross-site", true, true, 0, "https://console.example.com"},
		{"unlisted preflight", "OPTIONS", "https://evil.example", "cross-site", true, false, 403, ""},
		{"listed GET", "GET", "https://console.example.com", "cross-site", false, false, 0, "https://console.example.com"},
		{"unlisted GET: no headers", "GET", "https://evil.example", "cross-site", false, false, 0, ""},
		{"unlisted POST", "POST", "https://evil.example", "cross-site", false, false, 403, ""},
		{"listed POST", "POST", "https://console.example.com", "cross-site", false, false, 0, "https://console.example.com"},
		{"same-origin POST", "POST", "http://hub.local", "same-origin", false, false, 0, ""},
	}
	for _, tc := range cases {
		r := httptest.NewRequest(tc.method, "http://hub.local/publish", nil)
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		if tc.site != "" {
			r.Header.Set("Sec-Fetch-Site", tc.site)
		}
		if tc.preflight {
			r.Header.Set("Access-Control-Request-Method", "GET")
		}
		h := http.Header{}
		done, err := c.Check(r, h)
		var ref *Refusal
		switch {
		case tc.status == 0 && err != nil, tc.status != 0 && (!errors.As(err, &ref) || ref.Code != tc.status):
			t.Errorf("%s: Check = %v, want status %d", tc.name, err, tc.status)
		case done != tc.done:
			t.Errorf("%s: done = %v, want %v", tc.name, done, tc.done)
		case h.Get("Access-Control-Allow-Origin") != tc.acao:
			t.Errorf("%s: Access-Control-Allow-Origin = %q, want %q", tc.name, h.Get("Access-Control-Allow-Origin"), tc.acao)
		case tc.acao != "" && h.Get("Access-Control-Allow-Credentials") != "true":
			t.Errorf("%s: no credentials for a listed origin", tc.name)
		}
	}
	for _, bad := range []string{"*", "console.example.com", "https://x/path", "ftp://x", "https://user@x"} {
		if _, err := NewCORS([]string{bad}); err == nil {
			t.Errorf("NewCORS(%q) = nil error", bad)
		}
	}
}
