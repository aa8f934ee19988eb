package server

import (
	"cmp"
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/syncverse/hub/auth"
	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/internal/tokentest"
)

// Every route the hub serves is in docs/openapi.yaml, and nothing else is.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	d := loadAPIDoc(t)
	var documented []string
	for k := range d.operations() {
		documented = append(documented, k)
	}
	slices.Sort(documented)
	if served := servedRoutes(t); !slices.Equal(served, documented) {
		t.Errorf("routes served:\n  %s\nroutes in %s:\n  %s", strings.Join(served, "\n  "), openAPIFile, strings.Join(documented, "\n  "))
	}
}

// The responses of every operation, success and each reachable error, match docs/openapi.yaml: a real edge on a
// real Redis answers each request, and the answer is validated against the document (status documented, headers
// and JSON body as described; /events by its status and headers). Operations left without a validated answer fail.
func TestOpenAPIResponsesMatchTheDocument(t *testing.T) {
	d := loadAPIDoc(t)
	rs := rig.StartRedisWith(t, rig.RedisOptions{})
	anon := newEdge(t, rs, "HUB_LIMITS_MAX_EVENT_BYTES=512", "HUB_LIMITS_MAX_BODY_BYTES=2048")
	secure := newEdge(t, rs, "HUB_AUTH_HMAC_SECRET="+tokentest.Secret, "HUB_AUTH_LOGIN_URL=https://login.example/hub")
	rated := newEdge(t, rs, "HUB_LIMITS_PUBLISH_RATE=0.001", "HUB_LIMITS_PUBLISH_BURST=1")
	oneStream := newEdge(t, rs, "HUB_LIMITS_MAX_CONNECTIONS=1")
	onePerIP := newEdge(t, rs, "HUB_LIMITS_MAX_CONNECTIONS_PER_IP=1")
	strict := newEdge(t, rs, "HUB_EVENTS_VALIDATION=strict")
	present := newEdge(t, rs, "HUB_AUTH_HMAC_SECRET="+tokentest.Secret, "HUB_PRESENCE_ENABLED=true")
	seer := bearer(tokentest.Sign(t, auth.Grant{Subscribe: []string{"*"}, Presence: []string{"*"}}, time.Hour))
	all := bearer(tokentest.Sign(t, auth.Grant{Subscribe: []string{"*"}, Publish: []string{"*"}}, time.Hour))
	other := bearer(tokentest.Sign(t, auth.Grant{Subscribe: []string{"other"}, Publish: []string{"other"}}, time.Hour))
	past := time.Now().Add(-time.Hour)
	expired := bearer(forge(t, jwt.SigningMethodHS256, []byte(tokentest.Secret),
		hubClaims(auth.Grant{Subscribe: []string{"*"}}, past, past, past.Add(time.Minute))))
	tokenForm := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
	cross := http.Header{"Origin": {"https://elsewhere.example"}, "Sec-Fetch-Site": {"cross-site"}}
	rebound := http.Header{"Host": {"rebound.example"}}

	ids := map[*edge][]string{}
	for _, e := range []*edge{anon, secure} {
		for i := range 3 {
			id, err := e.Pub.Publish(t.Context(), "t", "progress", []byte(`{"workflow":"wf-1","progress":0.`+string(rune('1'+i))+`}`))
			if err != nil {
				t.Fatal(err)
			}
			ids[e] = append(ids[e], id)
		}
		if _, err := e.Pub.Publish(t.Context(), "t", "lock", []byte(`{"key":"db","holder":"a","fence":1,"state":"acquired","ttl_ms":500}`)); err != nil {
			t.Fatal(err)
		}
	}
	// Streams that hold the only slot of their edge, so the next one is refused.
	holdStream(t, oneStream.URL+"/events?topic=t")
	holdStream(t, onePerIP.URL+"/events?topic=t")
	// The rated edge's one token of burst goes to a first publish.
	if ex := send(t, rated.URL, call{method: "POST", path: "/publish", body: `{"topic":"t","data":{}}`}); ex.status != http.StatusAccepted {
		t.Fatalf("first publish on the rated edge = %d %s", ex.status, ex.resp)
	}

	var ps probes
	// /events
	ps.add(anon,
		call{name: "stream", path: "/events?topic=t&history=2", status: 200},
		call{name: "stream two topics resumed", path: "/events?topic=t&topic=u&last_event_id=" + url.QueryEscape("t="+ids[anon][0]), status: 200},
		call{name: "stream head", method: "HEAD", path: "/events?topic=t", status: 200},
		call{name: "stream no topic", path: "/events", status: 400},
		call{name: "stream bad topic", path: "/events?topic=a*b", status: 400},
		call{name: "stream bad cursor", path: "/events?topic=t", header: http.Header{"Last-Event-ID": {"nope"}}, status: 400},
		call{name: "stream head bad topic", method: "HEAD", path: "/events?topic=%7B", status: 400})
	ps.add(secure, call{name: "stream expired token", path: "/events?topic=t", header: expired, status: 401})
	ps.getHead(secure, "stream", " no token", call{path: "/events?topic=t", status: 401})
	ps.add(secure,
		call{name: "stream topic not granted", path: "/events?topic=t", header: other, status: 403},
		call{name: "stream head not granted", method: "HEAD", path: "/events?topic=t", header: other, status: 403})
	ps.add(anon, call{name: "stream from another host", path: "/events?topic=t", header: rebound, status: 403})
	ps.getHead(oneStream, "stream", " over max_connections", call{path: "/events?topic=t", status: 503})
	ps.add(onePerIP,
		call{name: "stream over max_connections_per_ip", path: "/events?topic=t", status: 429},
		call{name: "stream head over per ip", method: "HEAD", path: "/events?topic=t", status: 429})
	// /publish
	ps.add(anon,
		call{name: "publish", method: "POST", path: "/publish", body: `{"topic":"t","type":"log","data":"hello"}`, status: 202},
		call{name: "publish keyed", method: "POST", path: "/publish", header: http.Header{"Idempotency-Key": {`"k-1"`}}, body: `{"topic":"t","data":{"workflow":"wf-2"}}`, status: 202},
		call{name: "publish duplicate", method: "POST", path: "/publish", body: `{"topic":"t","data":{"workflow":"wf-2"},"idempotency_key":"k-1"}`, status: 202})
	ps.add(secure, call{name: "publish with token", method: "POST", path: "/publish", header: all, body: `{"topic":"t","data":{}}`, status: 202})
	ps.add(anon,
		call{name: "publish bad json", method: "POST", path: "/publish", body: `{"topic":`, status: 400},
		call{name: "publish unknown field", method: "POST", path: "/publish", body: `{"topic":"t","data":1,"x":1}`, status: 400},
		call{name: "publish reserved type", method: "POST", path: "/publish", body: `{"topic":"t","type":"reset","data":{}}`, status: 400},
		call{name: "publish bad topic", method: "POST", path: "/publish", body: `{"topic":"a b","data":{}}`, status: 400},
		call{name: "publish data its schema warns of", method: "POST", path: "/publish", body: `{"topic":"t","data":{"workflow":"wf-1","progress":40}}`, status: 202})
	ps.add(strict, call{name: "publish data its schema refuses (strict)", method: "POST", path: "/publish", body: `{"topic":"t","data":{"workflow":"wf-1","progress":40}}`, status: 400})
	ps.add(anon,
		call{name: "publish data over max_event_bytes", method: "POST", path: "/publish", body: `{"topic":"t","data":"` + strings.Repeat("x", 600) + `"}`, status: 413},
		call{name: "publish body over max_body_bytes", method: "POST", path: "/publish", body: `{"topic":"t","data":"` + strings.Repeat("x", 3000) + `"}`, status: 413})
	ps.add(secure,
		call{name: "publish no token", method: "POST", path: "/publish", body: `{"topic":"t","data":{}}`, status: 401},
		call{name: "publish not granted", method: "POST", path: "/publish", header: other, body: `{"topic":"t","data":{}}`, status: 403})
	ps.add(anon, call{name: "publish cross-site", method: "POST", path: "/publish", header: cross, body: `{"topic":"t","data":{}}`, status: 403})
	ps.add(rated, call{name: "publish over publish_rate", method: "POST", path: "/publish", body: `{"topic":"t","data":{}}`, status: 429})
	// /topics
	ps.getHead(anon, "topics", "", call{path: "/topics", status: 200})
	ps.add(secure, call{name: "topics with token", path: "/topics", header: all, status: 200})
	ps.getHead(anon, "topics", " with a body", call{path: "/topics", body: "x", status: 400})
	ps.getHead(secure, "topics", " no token", call{path: "/topics", status: 401})
	// history
	ps.getHead(anon, "history", "", call{path: "/topics/t/history", status: 200})
	ps.add(anon,
		call{name: "history page", path: "/topics/t/history?after=" + ids[anon][0] + "&limit=1", status: 200},
		call{name: "history of no stream", path: "/topics/none/history", status: 200},
		call{name: "history bad after", path: "/topics/t/history?after=x", status: 400},
		call{name: "history after newest", path: "/topics/t/history?after=99999999999999-0", status: 400},
		call{name: "history bad limit", path: "/topics/t/history?limit=1001", status: 400})
	ps.getHead(anon, "history", " bad topic", call{path: "/topics/a%2A/history", status: 400})
	ps.getHead(secure, "history", " no token", call{path: "/topics/t/history", status: 401})
	ps.getHead(secure, "history", " not granted", call{path: "/topics/t/history", header: other, status: 403})
	// snapshot
	ps.getHead(anon, "snapshot", "", call{path: "/topics/t/snapshot", status: 200})
	ps.add(secure, call{name: "snapshot with token", path: "/topics/t/snapshot", header: all, status: 200})
	ps.getHead(anon, "snapshot", " bad topic", call{path: "/topics/a%2A/snapshot", status: 400})
	ps.getHead(secure, "snapshot", " no token", call{path: "/topics/t/snapshot", status: 401})
	ps.getHead(secure, "snapshot", " not granted", call{path: "/topics/t/snapshot", header: other, status: 403})
	// presence
	ps.add(present,
		call{name: "presence, count only", path: "/topics/t/presence", header: all, status: 200},
		call{name: "presence with users", path: "/topics/t/presence", header: seer, status: 200},
		call{name: "presence head", method: "HEAD", path: "/topics/t/presence", header: seer, status: 200})
	ps.getHead(present, "presence", " bad topic", call{path: "/topics/a%2A/presence", header: all, status: 400})
	ps.getHead(present, "presence", " no token", call{path: "/topics/t/presence", status: 401})
	ps.getHead(present, "presence", " not granted", call{path: "/topics/t/presence", header: other, status: 403})
	ps.getHead(anon, "presence", " off", call{path: "/topics/t/presence", status: 404})
	ps.add(anon,
		call{name: "stream with presence frames", path: "/events?topic=t&presence=1", status: 200},
		call{name: "stream bad presence", path: "/events?topic=t&presence=yes", status: 400})
	// /auth/session
	ps.add(secure,
		call{name: "sign in by header", method: "POST", path: "/auth/session", header: all, status: 200},
		call{name: "sign in by form", method: "POST", path: "/auth/session", header: tokenForm, body: "token=" + strings.TrimPrefix(all.Get("Authorization"), "Bearer "), status: 200},
		call{name: "sign in without token", method: "POST", path: "/auth/session", header: tokenForm, body: "x=1", status: 400},
		call{name: "sign in malformed token", method: "POST", path: "/auth/session", header: http.Header{"Authorization": {"Basic abc"}}, status: 401},
		call{name: "sign in expired", method: "POST", path: "/auth/session", header: expired, status: 401})
	ps.add(anon, call{name: "sign in anonymous hub", method: "POST", path: "/auth/session", header: all, status: 400})
	ps.add(secure, call{name: "sign in cross-site", method: "POST", path: "/auth/session", header: cross, status: 403})
	ps.getHead(secure, "session", "", call{path: "/auth/session", header: all, status: 200})
	ps.add(anon, call{name: "session anonymous", path: "/auth/session", status: 200})
	ps.getHead(anon, "session", " with a body", call{path: "/auth/session", body: "x", status: 400})
	ps.getHead(secure, "session", " none", call{path: "/auth/session", status: 401})
	ps.add(secure,
		call{name: "sign out", method: "DELETE", path: "/auth/session", status: 204},
		call{name: "sign out cross-site", method: "DELETE", path: "/auth/session", header: cross, status: 403})
	// operations
	ps.getHead(anon, "metrics", "", call{path: "/metrics", status: 200})
	ps.getHead(anon, "metrics", " with a body", call{path: "/metrics", body: "x", status: 400})
	ps.getHead(secure, "metrics", " no token", call{path: "/metrics", status: 401})
	ps.getHead(secure, "healthz", "", call{path: "/healthz", status: 200})
	ps.getHead(anon, "healthz", " with a body", call{path: "/healthz", body: "x", status: 400})
	ps.getHead(secure, "readyz", "", call{path: "/readyz", status: 200})
	ps.getHead(anon, "readyz", " with a body", call{path: "/readyz", body: "x", status: 400})
	// the console
	ps.getHead(anon, "console", "", call{path: "/", status: 200})
	ps.getHead(anon, "console", " with a body", call{path: "/", body: "x", status: 400})
	ps.getHead(anon, "console", " from another host", call{path: "/", header: rebound, status: 403})
	ps.getHead(anon, "console file", "", call{path: "/app.js", status: 200})
	ps.add(secure, call{name: "console style", path: "/style.css", status: 200})
	ps.add(anon, call{name: "console icon", path: "/favicon.svg", status: 200})
	ps.getHead(anon, "console file", " not found", call{path: "/nope.js", status: 404})
	ps.getHead(anon, "console file", " with a body", call{path: "/app.js", body: "x", status: 400})
	ps.getHead(anon, "console file", " from another host", call{path: "/app.js", header: rebound, status: 403})
	covered := map[string]bool{}
	ps.run(t, d, covered)

	// Redis down: the answers that say so, with Retry-After.
	down := rig.StartRedisWith(t, rig.RedisOptions{})
	gone := newEdge(t, down, "HUB_PRESENCE_ENABLED=true")
	down.Kill()
	var downs probes
	downs.getHead(gone, "readyz", " redis down", call{path: "/readyz", status: 503})
	downs.getHead(gone, "topics", " redis down", call{path: "/topics", status: 503})
	downs.getHead(gone, "history", " redis down", call{path: "/topics/t/history", status: 503})
	downs.getHead(gone, "snapshot", " redis down", call{path: "/topics/t/snapshot", status: 503})
	downs.getHead(gone, "presence", " redis down", call{path: "/topics/t/presence", status: 503})
	downs.add(gone, call{name: "publish redis down", method: "POST", path: "/publish", body: `{"topic":"t","data":{}}`, status: 503})
	downs.run(t, d, covered)
	// Back up, so that the clients' redials end before the test does.
	if err := down.Start(); err != nil {
		t.Fatal(err)
	}
	rig.Eventually(t, 10*time.Second, "GET /readyz = 200 once Redis is back", func() bool {
		return send(t, gone.URL, call{name: "readyz", path: "/readyz"}).status == http.StatusOK
	})

	for key, id := range d.operations() {
		if !covered[id] {
			t.Errorf("%s (%s): no response of it was validated; add a probe", key, id)
		}
	}
}

// probe is one request of the document's check, sent to the edge on.
type probe struct {
	call
	on *edge
}

// probes is a table of probes, in the order they are sent.
type probes []probe

// add appends the calls cs, each to be sent to on.
func (ps *probes) add(on *edge, cs ...call) {
	for _, c := range cs {
		*ps = append(*ps, probe{c, on})
	}
}

// getHead appends c sent to on by GET and again by HEAD, named subject+rest and subject+" head"+rest.
func (ps *probes) getHead(on *edge, subject, rest string, c call) {
	get, head := c, c
	get.name, head.name, head.method = subject+rest, subject+" head"+rest, http.MethodHead
	ps.add(on, get, head)
}

// run sends each probe in a subtest of its name, validates the answer and marks its operation covered.
func (ps probes) run(t *testing.T, d *apiDoc, covered map[string]bool) {
	for _, p := range ps {
		t.Run(p.name, func(t *testing.T) { check1(t, d, send(t, p.on.URL, p.call), p.call, covered) })
	}
}

// check1 validates one exchange and marks its operation covered.
func check1(t *testing.T, d *apiDoc, ex exchange, c call, covered map[string]bool) {
	t.Helper()
	if ex.status != c.status {
		t.Fatalf("%s %s = %d %s, want %d (the probe must reach the answer it is named for)", cmp.Or(c.method, "GET"), clipPath(c.path), ex.status, ex.resp, c.status)
	}
	id, err := d.validate(ex)
	if err != nil {
		t.Fatalf("%s %s = %d %v %s\ndoes not match %s: %v", cmp.Or(c.method, "GET"), clipPath(c.path), ex.status, ex.header, clip(ex.resp), openAPIFile, err)
	}
	covered[id] = true
}

// holdStream opens a stream until the test ends.
func holdStream(t *testing.T, u string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		cancel()
		t.Fatalf("GET %s = %v %v, want a stream", u, resp, err)
	}
	t.Cleanup(func() { cancel(); resp.Body.Close() })
}

func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

// The validation above can fail: answers that drift from the document in a field, a header or a status are caught.
func TestOpenAPIValidationCatchesDrift(t *testing.T) {
	d := loadAPIDoc(t)
	get := func(path string) *http.Request {
		r, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:1"+path, nil)
		return r
	}
	jsonCT := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
	unauth := http.Header{"Content-Type": {"application/json; charset=utf-8"}, "Www-Authenticate": {`Bearer realm="hub"`}}
	for _, c := range []struct {
		name string
		ex   exchange
		ok   bool
	}{
		{"healthz as served", exchange{req: get("/healthz"), status: 200, header: jsonCT, resp: []byte(`{"status":"ok"}`)}, true},
		{"healthz with a field more", exchange{req: get("/healthz"), status: 200, header: jsonCT, resp: []byte(`{"status":"ok","x":1}`)}, false},
		{"topics without truncated", exchange{req: get("/topics"), status: 200, header: jsonCT, resp: []byte(`{"topics":[]}`)}, false},
		{"history event id not an id", exchange{req: get("/topics/t/history"), status: 200, header: jsonCT,
			resp: []byte(`{"topic":"t","events":[{"id":"x","prev":"0-0","type":"progress","data":{}}],"next":"x","more":false}`)}, false},
		{"401 as served", exchange{req: get("/topics"), status: 401, header: unauth, resp: []byte(`{"error":"no token"}`)}, true},
		{"401 without WWW-Authenticate", exchange{req: get("/topics"), status: 401, header: jsonCT, resp: []byte(`{"error":"no token"}`)}, false},
		{"error with another shape", exchange{req: get("/topics"), status: 401, header: unauth, resp: []byte(`{"message":"no token"}`)}, false},
		{"a status not documented", exchange{req: get("/topics"), status: 418, header: jsonCT, resp: []byte(`{"error":"teapot"}`)}, false},
		{"an error in plain text", exchange{req: get("/topics"), status: 400, header: http.Header{"Content-Type": {"text/plain"}}, resp: []byte("bad")}, false},
		{"stream without X-Accel-Buffering", exchange{req: get("/events?topic=t"), status: 200,
			header: http.Header{"Content-Type": {"text/event-stream"}, "Cache-Control": {"no-cache"}}}, false},
	} {
		_, err := d.validate(c.ex)
		if (err == nil) != c.ok {
			t.Errorf("%s: validate = %v, want ok=%v", c.name, err, c.ok)
		}
	}
}
