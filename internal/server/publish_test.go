package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/syncverse/hub/auth"
	"github.com/syncverse/hub/internal/rig"
)

// postPublish sends one POST /publish and returns the status and the answer's id, duplicate flag and error.
func postPublish(t *testing.T, base, body string, header http.Header) (status int, id string, dup bool, msg string) {
	t.Helper()
	req := call{name: "POST /publish", method: http.MethodPost, path: "/publish", header: header, body: body}.request(t, t.Context(), base)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /publish %s: %v", body, err)
	}
	defer resp.Body.Close()
	var a struct {
		ID        string `json:"id"`
		Duplicate bool   `json:"duplicate"`
		Error     string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		t.Fatalf("POST /publish %s: answer is not JSON: %v", body, err)
	}
	return resp.StatusCode, a.ID, a.Duplicate, a.Error
}

// POST /publish with an idempotency key, in the header (quoted as RFC 8941 writes it, or not) or in the body: the
// same key again, also from several requests at once, answers 202 with the first id and "duplicate": true, and the
// stream holds one event per key.
func TestPublishIdempotencyKey(t *testing.T) {
	rs := rig.StartRedis(t)
	e := newEdge(t, rs)
	body := `{"topic":"t","data":{"workflow":"wf-1"}}`
	status, first, dup, msg := postPublish(t, e.URL, body, http.Header{"Idempotency-Key": {`"wf-1/a"`}})
	if status != http.StatusAccepted || first == "" || dup {
		t.Fatalf("POST /publish with Idempotency-Key = %d %q dup=%v %q; want 202 with a new id", status, first, dup, msg)
	}
	keyed := `{"topic":"t","data":{"workflow":"wf-1"},"idempotency_key":"wf-1/a"}`
	if status, id, dup, msg := postPublish(t, e.URL, keyed, nil); status != http.StatusAccepted || id != first || !dup {
		t.Errorf("POST /publish with the same key in the body = %d %q dup=%v %q; want 202 %s duplicate", status, id, dup, msg, first)
	}
	var wg sync.WaitGroup
	answers := make([]string, 8)
	for i := range answers {
		wg.Go(func() {
			status, id, dup, msg := postPublish(t, e.URL, body, http.Header{"Idempotency-Key": {"wf-1/b"}})
			answers[i] = fmt.Sprintf("%d %s %v %s", status, id, dup, msg)
		})
	}
	wg.Wait()
	fresh := 0
	for _, a := range answers {
		if strings.HasSuffix(a, " false ") {
			fresh++
		}
		if !strings.HasPrefix(a, "202 ") || strings.Fields(a)[1] != strings.Fields(answers[0])[1] {
			t.Errorf("8 concurrent POSTs with one key answered %q; want 202 and one id", answers)
			break
		}
	}
	if n, err := e.RDB.XLen(t.Context(), e.StreamKey("t")).Result(); err != nil || n != 2 || fresh != 1 {
		t.Errorf("after 2 keys sent 10 times: XLEN %d, %v, %d answers not duplicate; want 2 events and 1", n, err, fresh)
	}
	fams := rig.Scrape(t, e.URL)
	rig.WantByLabel(t, fams, "hub_http_publish_total", "outcome", map[string]float64{"ok": 2, "duplicate": 8})
}

// What POST /publish refuses with 400 or 413 and a clear error, storing nothing: keys the contract does not allow,
// a header and a body that disagree, the hub's own event types, and JSON that Go accepts but the script's decoder
// does not (before, those two came back as 503 "redis unavailable" and counted as an outage).
func TestPublishRefusals(t *testing.T) {
	rs := rig.StartRedis(t)
	e := newEdge(t, rs)
	deep := strings.Repeat("[", 1001) + strings.Repeat("]", 1001)
	calls := []call{
		{name: "key with a space", method: "POST", path: "/publish", header: http.Header{"Idempotency-Key": {"a b"}}, body: `{"topic":"t","data":{}}`, status: 400, errHas: "idempotency key"},
		{name: "key too long", method: "POST", path: "/publish", body: `{"topic":"t","data":{},"idempotency_key":"` + strings.Repeat("k", 256) + `"}`, status: 400, errHas: "idempotency key"},
		{name: "header and body keys differ", method: "POST", path: "/publish", header: http.Header{"Idempotency-Key": {"a"}}, body: `{"topic":"t","data":{},"idempotency_key":"b"}`, status: 400, errHas: "differ"},
		{name: "type reset", method: "POST", path: "/publish", body: `{"topic":"t","type":"reset","data":{}}`, status: 400, errHas: "the hub's own"},
		{name: "type auth-expired", method: "POST", path: "/publish", body: `{"topic":"t","type":"auth-expired","data":{}}`, status: 400, errHas: "the hub's own"},
		{name: "type health", method: "POST", path: "/publish", body: `{"topic":"t","type":"health","data":{}}`, status: 400, errHas: "the hub's own"},
		{name: "nesting deeper than 1000", method: "POST", path: "/publish", body: `{"topic":"t","data":` + deep + `}`, status: 400, errHas: "nests deeper"},
		{name: "lone surrogate", method: "POST", path: "/publish", body: `{"topic":"t","data":{"s":"\ud800"}}`, status: 400, errHas: "surrogate"},
		{name: "lone low surrogate", method: "POST", path: "/publish", body: `{"topic":"t","data":"x\udc00"}`, status: 400, errHas: "surrogate"},
	}
	check(t, e.URL, calls, func(t *testing.T) {
		if n, _ := e.RDB.Exists(t.Context(), e.StreamKey("t")).Result(); n != 0 {
			t.Errorf("a refused publish left the stream %s", e.StreamKey("t"))
		}
	})
}

// POST /publish keys are the token subject's own: agent B (shared.*) publishing with key wf-7/deploy neither drops
// agent A's event with the same key nor shows A its id; A's key reused with other data answers 409 and stores
// nothing.
func TestPublishIdempotencyKeysArePerSubject(t *testing.T) {
	rs := rig.StartRedis(t)
	e, admin := secureEdge(t, rs)
	now := time.Now()
	token := func(sub string, publish ...string) http.Header {
		c := hubClaims(auth.Grant{Publish: publish}, now, now, now.Add(time.Hour))
		c["sub"] = sub
		h := bearer(forge(t, jwt.SigningMethodHS256, []byte(testSecret), c))
		h.Set("Idempotency-Key", "wf-7/deploy")
		return h
	}
	b, a := token("agent-b", "shared.*"), token("agent-a", "shared.t")
	status, idB, _, msg := postPublish(t, e.URL, `{"topic":"shared.t","data":{"status":"running"}}`, b)
	if status != http.StatusAccepted {
		t.Fatalf("B's POST /publish = %d %q", status, msg)
	}
	status, idA, dup, msg := postPublish(t, e.URL, `{"topic":"shared.t","data":{"status":"succeeded"}}`, a)
	if status != http.StatusAccepted || dup || idA == idB || idA == "" {
		t.Errorf("A's POST /publish with B's key name = %d id %q dup=%v %q; want 202 with a new id (not B's %s)", status, idA, dup, msg, idB)
	}
	status, id, _, msg := postPublish(t, e.URL, `{"topic":"shared.t","data":{"status":"failed"}}`, a)
	if status != http.StatusConflict || id != "" || !strings.Contains(msg, "other type or data") {
		t.Errorf("A's key again with other data = %d id %q %q; want 409 naming the conflict, no id", status, id, msg)
	}
	if n, err := e.RDB.XLen(t.Context(), e.StreamKey("shared.t")).Result(); err != nil || n != 2 {
		t.Errorf("XLEN = %d, %v; want 2 (B's and A's events)", n, err)
	}
	if v, _ := rig.MetricValue(rig.ScrapeWith(t, e.URL, admin), "hub_http_publish_total", "outcome=conflict"); v != 1 {
		t.Errorf("hub_http_publish_total{outcome=conflict} = %v, want 1", v)
	}
}
