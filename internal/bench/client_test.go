package bench

import (
	"fmt"
	"io"
	"net/http/httputil"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/syncverse/hub/hub"
)

// TestClientCountsChunkedFramesSplitAnywhere reads a chunked SSE body a byte at a time and whole, and checks that
// the client counts the events, heartbeats, duplicates and reorderings each time.
func TestClientCountsChunkedFramesSplitAnywhere(t *testing.T) {
	var sse strings.Builder
	sse.WriteString("retry: 2000\n\n")
	frame := func(id string, p, s int) {
		fmt.Fprintf(&sse, "id: %s\nevent: progress\ndata: {\"p\":%d,\"s\":%d,\"t\":1,\"x\":\"xx\"}\n\n", id, p, s)
	}
	frame("5-0", 0, 0)
	frame("5-1", 1, 0)
	sse.WriteString(":heartbeat\n\n")
	frame("6-0", 0, 1)
	frame("6-0", 0, 1) // the same event again: a duplicate, and an id that did not grow
	frame("7-0", 1, 2)
	frame("8-0", 1, 1) // publisher 1 went backwards
	body := chunk(sse.String(), 7) + "0\r\n\r\n"

	for name, r := range map[string]func() io.Reader{
		"whole":         func() io.Reader { return strings.NewReader(body) },
		"byte for byte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(body)) },
	} {
		l := &load{pubs: 2, perPub: 4}
		c := newClient(l)
		if err := c.consume(httputil.NewChunkedReader(r()), func(time.Time) {}); err != errEndOfStream {
			t.Fatalf("%s: consume = %v, want errEndOfStream", name, err)
		}
		if c.opened.IsZero() || c.received != 5 || c.dups != 1 || c.disorder != 2 || c.beats != 1 {
			t.Fatalf("%s: opened %v, received %d, dups %d, disorder %d, beats %d; want opened, 5, 1, 2, 1",
				name, !c.opened.IsZero(), c.received, c.dups, c.disorder, c.beats)
		}
		if lost := c.lost([]bool{true, true, true, false, true, true, true, true}); lost != 2 {
			t.Fatalf("%s: lost = %d, want 2 (events 0/2 and 1/3 were published and never came)", name, lost)
		}
	}
}

// chunk encodes s as an HTTP/1.1 chunked body of n-byte chunks, one with an extension.
func chunk(s string, n int) string {
	var b strings.Builder
	for i := 0; i < len(s); i += n {
		part := s[i:min(i+n, len(s))]
		ext := ""
		if i == n {
			ext = ";name=value"
		}
		fmt.Fprintf(&b, "%x%s\r\n%s\r\n", len(part), ext, part)
	}
	return b.String()
}

// The load client's id parser is a fast path of hub.ParseID: it must accept and refuse exactly the same ids.
func TestParseIDAgreesWithHub(t *testing.T) {
	for _, s := range []string{"0-0", "1-0", "1732870000000-7", "18446744073709551615-18446744073709551615",
		"18446744073709551616-0", "99999999999999999999-0", "1-", "-1", "1", "", "a-1", "1-1-1", "01-02", "+1-0",
		"123456789012345678901-0", "1 -0"} {
		want, err := hub.ParseID(s)
		got, ok := parseID([]byte(s))
		if ok != (err == nil) || ok && got != want {
			t.Errorf("parseID(%q) = %v, %v; hub.ParseID = %v, %v", s, got, ok, want, err)
		}
	}
}
