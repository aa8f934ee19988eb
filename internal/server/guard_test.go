package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/auth"
	"github.com/syncverse/hub/internal/rig"
)

// commandCalls reads how many times Redis has run each of cmds (INFO commandstats).
func commandCalls(t testing.TB, rdb *redis.Client, cmds ...string) map[string]int {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatalf("INFO commandstats: %v", err)
	}
	out := map[string]int{}
	for _, line := range strings.Split(info, "\n") {
		for _, c := range cmds {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+c+":calls="); ok {
				n, _ := strconv.Atoi(strings.SplitN(rest, ",", 2)[0])
				out[c] = n
			}
		}
	}
	return out
}

// GET /topics filters by the grant before it asks Redis anything about a topic: a token for mine.* sees all of its
// 20 topics among 3,000 others, the hub describes only those, and a grant that matches nothing costs nothing.
func TestTopicsListingFiltersByGrant(t *testing.T) {
	rs := rig.StartRedisWith(t, rig.RedisOptions{})
	h, _ := secureEdge(t, rs, "HUB_LIMITS_MAX_TOPICS_LISTED=50")
	ctx := context.Background()
	pipe := h.RDB.Pipeline()
	var mine []string
	for i := range 3020 {
		topic := fmt.Sprintf("other.%04d", i)
		if i%151 == 0 {
			topic = fmt.Sprintf("mine.%02d", len(mine))
			mine = append(mine, topic)
		}
		pipe.XAdd(ctx, &redis.XAddArgs{Stream: h.StreamKey(topic), Values: []string{"p", "0-0", "t", "progress", "d", "{}"}})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatalf("seed streams: %v", err)
	}
	list := func(name string, g auth.Grant) (names []string, truncated bool, describes int) {
		t.Helper()
		before := commandCalls(t, h.RDB, "xlen", "xrevrange", "scan")
		req, _ := http.NewRequest(http.MethodGet, h.URL+"/topics", nil)
		req.Header.Set("Authorization", "Bearer "+signToken(t, g, time.Hour))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: GET /topics: %v", name, err)
		}
		var body struct {
			Topics    []struct{ Name string }
			Truncated bool
		}
		decodeJSON(t, resp, &body)
		after := commandCalls(t, h.RDB, "xlen", "xrevrange", "scan")
		t.Logf("GET /topics for %s: %d topics, %d SCAN, %d XLEN+XREVRANGE", name, len(body.Topics), after["scan"]-before["scan"],
			after["xlen"]-before["xlen"]+after["xrevrange"]-before["xrevrange"])
		for _, tp := range body.Topics {
			names = append(names, tp.Name)
		}
		slices.Sort(names)
		return names, body.Truncated, after["xlen"] - before["xlen"] + after["xrevrange"] - before["xrevrange"]
	}
	if len(mine) != 20 {
		t.Fatalf("seeded %d mine.* topics, want 20", len(mine))
	}
	got, trunc, cost := list("mine.*", auth.Grant{Subscribe: []string{"mine.*"}})
	if !slices.Equal(got, mine) || trunc || cost > 2*len(mine) {
		t.Errorf("GET /topics for mine.* = %d topics %v (truncated %v) at %d describe commands, want the 20 %v, not truncated, at most 40",
			len(got), got, trunc, cost, mine)
	}
	got, trunc, cost = list("two names", auth.Grant{Subscribe: []string{"mine.03", "mine.07", "absent"}})
	if !slices.Equal(got, []string{"mine.03", "mine.07"}) || trunc || cost > 6 {
		t.Errorf("GET /topics for two named topics = %v (truncated %v) at %d commands, want [mine.03 mine.07] at most 6", got, trunc, cost)
	}
	if got, _, cost = list("nothing", auth.Grant{Publish: []string{"*"}}); len(got) != 0 || cost != 0 {
		t.Errorf("GET /topics with no subscribe grant = %v at %d describe commands, want none at 0", got, cost)
	}
	got, trunc, cost = list("everything", auth.Grant{Subscribe: []string{"*"}})
	if len(got) != 50 || !trunc || cost > 100 {
		t.Errorf("GET /topics for * = %d topics (truncated %v) at %d describe commands, want 50, truncated, at most 100", len(got), trunc, cost)
	}
}

// /topics/{topic}/... percent-decodes the topic, as encodeURIComponent sends it: wf%3A7 is wf:7.
func TestTopicPathPercentDecoded(t *testing.T) {
	rs := rig.StartRedis(t)
	h, admin := secureEdge(t, rs)
	id := h.publish(t, "wf:7", "progress", `{"workflow":"wf-1","seq":1}`)
	reader := signToken(t, auth.Grant{Subscribe: []string{"wf:*"}}, time.Hour)
	other := signToken(t, auth.Grant{Subscribe: []string{"wf-other"}}, time.Hour)
	check(t, h.URL, []call{
		{name: "history of wf%3A7", path: "/topics/wf%3A7/history", header: bearer(reader), status: 200},
		{name: "snapshot of wf%3A7", path: "/topics/wf%3A7/snapshot", header: bearer(admin), status: 200},
		{name: "grant checked on the decoded topic", path: "/topics/wf%3A7/history", header: bearer(other), status: 403, errHas: "wf:7"},
		{name: "an encoded slash is no topic", path: "/topics/wf%2F7/history", header: bearer(admin), status: 400, errHas: "topic"},
		{name: "an encoded percent sign", path: "/topics/wf%25zz/history", header: bearer(admin), status: 400, errHas: "topic"},
	}, func(*testing.T) {})
	req, _ := http.NewRequest(http.MethodGet, h.URL+"/topics/wf%3A7/history", nil)
	req.Header.Set("Authorization", "Bearer "+reader)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Topic  string
		Events []struct{ ID string }
	}
	decodeJSON(t, resp, &page)
	if page.Topic != "wf:7" || len(page.Events) != 1 || page.Events[0].ID != id {
		t.Errorf("GET /topics/wf%%3A7/history = %+v, want topic wf:7 with event %s", page, id)
	}
}

// /events answers 401 with WWW-Authenticate: Bearer, like every other route.
func TestEventsUnauthorizedChallenge(t *testing.T) {
	rs := rig.StartRedis(t)
	h, _ := secureEdge(t, rs)
	for name, hdr := range map[string]http.Header{"no token": nil, "bad token": bearer("a.b.c")} {
		c := rig.OpenStreamWith(t, h.URL, rig.TopicQuery("a"), hdr)
		c.Close()
		if c.Status != http.StatusUnauthorized || !strings.HasPrefix(c.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: GET /events = %d with WWW-Authenticate %q, want 401 with a Bearer challenge", name, c.Status,
				c.Header.Get("WWW-Authenticate"))
		}
	}
}

// DNS rebinding: in anonymous mode a page whose host name now resolves to 127.0.0.1 sends its own name as Host (and
// a matching Origin). Only addresses, localhost names and auth.allowed_hosts are served; probes answer anyone.
func TestAnonymousHostAllowList(t *testing.T) {
	rs := rig.StartRedis(t)
	h := newEdge(t, rs, "HUB_AUTH_ALLOWED_HOSTS=hub.internal, console.example.com:8443")
	port := h.Addr[strings.LastIndex(h.Addr, ":")+1:]
	evil := "rebind.example:" + port
	as := func(host string, hdr http.Header) http.Header {
		out := http.Header{"Host": {host}}
		for k, v := range hdr {
			out[k] = v
		}
		return out
	}
	sameSite := http.Header{"Origin": {"http://" + evil}, "Sec-Fetch-Site": {"same-origin"}}
	calls := []call{
		{name: "topics", path: "/topics", header: as(evil, nil), status: 403, errHas: "auth.allowed_hosts"},
		{name: "publish", method: "POST", path: "/publish", header: as(evil, sameSite), body: eventJSON("rebind", "progress"), status: 403, errHas: "rebind.example"},
		{name: "events", path: "/events?topic=rebind", header: as(evil, nil), status: 403},
		{name: "console", path: "/", header: as(evil, nil), status: 403},
		{name: "metrics", path: "/metrics", header: as(evil, nil), status: 403},
		{name: "healthz answers any host", path: "/healthz", header: as(evil, nil), status: 200},
		{name: "localhost", path: "/topics", header: as("localhost:"+port, nil), status: 200},
		{name: "a .localhost name", path: "/topics", header: as("app.localhost:"+port, nil), status: 200},
		{name: "127.0.0.1", path: "/topics", header: as("127.0.0.1:"+port, nil), status: 200},
		{name: "[::1]", path: "/topics", header: as("[::1]:"+port, nil), status: 200},
		{name: "another address: no name to rebind", path: "/topics", header: as("192.0.2.7:"+port, nil), status: 200},
		{name: "listed name, any port", path: "/topics", header: as("hub.internal:"+port, nil), status: 200},
		{name: "listed name and port", path: "/topics", header: as("Console.Example.com:8443", nil), status: 200},
		{name: "listed name, other port", path: "/topics", header: as("console.example.com:9000", nil), status: 403},
	}
	for _, c := range calls {
		r := do(t, h.URL, c)
		if r.status != c.status || !strings.Contains(r.msg, c.errHas) {
			t.Errorf("%s: %s %s with Host %s = %d %q, want %d with %q", c.name, c.method, c.path, c.header.Get("Host"),
				r.status, r.msg, c.status, c.errHas)
		}
	}
	if n := h.RDB.XLen(context.Background(), h.StreamKey("rebind")).Val(); n != 0 {
		t.Errorf("XLEN rebind = %d after a publish with a foreign Host, want 0", n)
	}
	if v, _ := rig.MetricValue(rig.Scrape(t, h.URL), "hub_http_rejected_total", "reason=host"); v != 6 {
		t.Errorf("hub_http_rejected_total{reason=host} = %v, want 6", v)
	}
}

// While Redis is down every route that needs it answers 503 "redis unavailable" with Retry-After, and no error
// body names Redis's address or repeats its error text.
func TestErrorsNameNoInternalAddress(t *testing.T) {
	rs := rig.StartRedisWith(t, rig.RedisOptions{})
	h := newEdge(t, rs)
	rs.Kill()
	port := rs.Addr[strings.LastIndex(rs.Addr, ":")+1:]
	for _, c := range []call{
		{name: "topics", path: "/topics"},
		{name: "history", path: "/topics/a/history"},
		{name: "snapshot", path: "/topics/a/snapshot"},
		{name: "publish", method: "POST", path: "/publish", body: eventJSON("a", "progress")},
		{name: "readyz", path: "/readyz"},
	} {
		r := do(t, h.URL, c)
		if r.status != http.StatusServiceUnavailable || r.msg != "redis unavailable" || r.header.Get("Retry-After") == "" {
			t.Errorf("%s: %s %s with Redis down = %d %q (Retry-After %q), want 503 \"redis unavailable\" with Retry-After",
				c.name, c.method, c.path, r.status, r.msg, r.header.Get("Retry-After"))
		}
		for _, leak := range []string{port, "dial", "connect", "refused", "EOF"} {
			if strings.Contains(r.msg, leak) {
				t.Errorf("%s: error body %q names %q", c.name, r.msg, leak)
			}
		}
	}
}

// HEAD works wherever GET does: same status, no body.
func TestHeadWorksWhereGetDoes(t *testing.T) {
	rs := rig.StartRedis(t)
	h := newEdge(t, rs)
	h.publish(t, "head", "progress", `{"workflow":"wf-1","seq":1}`)
	rig.Eventually(t, 5*time.Second, "GET /readyz = 200", func() bool {
		resp, err := http.Get(h.URL + "/readyz")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	for _, path := range []string{"/healthz", "/readyz", "/topics", "/topics/head/history", "/topics/head/snapshot",
		"/metrics", "/", "/events?topic=head"} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodHead, h.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			cancel()
			t.Fatalf("HEAD %s: %v", path, err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		cancel()
		if resp.StatusCode != http.StatusOK || n != 0 {
			t.Errorf("HEAD %s = %d with %d body bytes, want 200 and none", path, resp.StatusCode, n)
		}
	}
	rig.WaitZero(t, h.URL, "", "hub_subscriptions", "hub_sse_connections_active")
}

// A request whose handler does not read its body, with a declared body that never comes, is answered at once and
// its connection closed: net/http would otherwise wait for the body until limits.request_read_timeout (30 s here,
// beyond the raw request's 5 s deadline) before answering.
func TestUnreadBodyIsNotWaitedFor(t *testing.T) {
	rs := rig.StartRedis(t)
	h := newEdge(t, rs, "HUB_LIMITS_REQUEST_READ_TIMEOUT=30s")
	for _, req := range []string{
		"DELETE /auth/session HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n",
		"OPTIONS /publish HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n",
		"POST /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n",
	} {
		line := strings.SplitN(req, "\r\n", 2)[0]
		started := time.Now()
		status, _ := rig.RawRequest(t, h.Addr, req)
		if took := time.Since(started); status == 0 || took > 4*time.Second {
			t.Errorf("%s with a body that never comes: %d after %v; want an answer at once", line, status, took)
		}
	}
	// A body that is read (POST /publish) still keeps its connection for the next request.
	conn, err := net.Dial("tcp", h.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(conn)
	body := `{"topic":"t","data":{}}`
	for i := range 2 {
		fmt.Fprintf(conn, "POST /publish HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("publish %d on one connection: %v", i, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted || resp.Close {
			t.Errorf("publish %d on one connection = %d (close %v), want 202 and the connection kept", i, resp.StatusCode, resp.Close)
		}
	}
}
