// Package presence runs hub processes on one real Redis and checks who-is-watching across them: counts and names
// on both hubs within an interval, a leaver and a killed hub forgotten in time, anonymous streams counted and never
// named, the grants, and presence frames.
package presence

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/syncverse/hub/auth"
	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/internal/tokentest"
)

// The timers of these tests' hubs: short, so each step shows within seconds.
const (
	interval = time.Second
	expiry   = 3 * time.Second
	// slack is what a loaded machine may add to a deadline the hub keeps.
	slack = 3 * time.Second
)

var hubBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "presence-hub-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	hubBin = filepath.Join(dir, "hub")
	build := exec.Command("go", "build", "-o", hubBin, ".") // without -race: the binary operators run
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build the hub: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func startHub(t *testing.T, rs *rig.Redis, prefix string, extra ...string) *rig.Hub {
	t.Helper()
	return startHubOn(t, "redis://"+rs.Addr+"/0", prefix, extra...)
}

// twoHubs starts two hubs, with the extra settings, on one real Redis under one prefix: one topic's watchers may
// be on either.
func twoHubs(t *testing.T, extra ...string) (*rig.Hub, *rig.Hub) {
	t.Helper()
	rs := rig.StartRedisWith(t, rig.RedisOptions{})
	prefix := rig.Prefix(t)
	return startHub(t, rs, prefix, extra...), startHub(t, rs, prefix, extra...)
}

func startHubOn(t *testing.T, redisURL, prefix string, extra ...string) *rig.Hub {
	t.Helper()
	h, err := rig.StartHub(hubBin, "127.0.0.1:0", append([]string{
		"HUB_REDIS_URL=" + redisURL,
		"HUB_REDIS_PREFIX=" + prefix,
		"HUB_AUTH_HMAC_SECRET=" + tokentest.Secret,
		"HUB_AUTH_ANONYMOUS=true",
		"HUB_PRESENCE_ENABLED=true",
		"HUB_PRESENCE_INTERVAL=" + interval.String(),
		"HUB_PRESENCE_EXPIRY=" + expiry.String(),
		"HUB_SSE_HEARTBEAT=500ms",
		"HUB_SHUTDOWN_TIMEOUT=3s",
		"HUB_LOG_LEVEL=warn",
	}, extra...), 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Stop(); err != nil {
			t.Errorf("hub %s: %v", h.URL, err)
		}
		if t.Failed() {
			t.Logf("hub %s logs:\n%s", h.URL, h.Logs())
		}
	})
	return h
}

func token(t *testing.T, subject string, g auth.Grant) http.Header {
	t.Helper()
	tok, err := auth.Sign([]byte(tokentest.Secret), g, auth.Claims{Subject: subject, TTL: time.Hour}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return rig.Bearer(tok)
}

// answer is GET /topics/{topic}/presence as a client reads it.
type answer struct {
	Status    int
	Topic     string
	Count     int
	Users     []string
	Hubs      int
	Truncated bool
	HasUsers  bool
}

func presenceOf(t *testing.T, base, topic string, hdr http.Header) answer {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/topics/"+topic+"/presence", nil)
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET presence: %v", err)
	}
	defer resp.Body.Close()
	a := answer{Status: resp.StatusCode}
	var raw map[string]json.RawMessage
	if json.NewDecoder(resp.Body).Decode(&raw) == nil && resp.StatusCode == http.StatusOK {
		b, _ := json.Marshal(raw)
		_ = json.Unmarshal(b, &a)
		_, a.HasUsers = raw["users"]
	}
	return a
}

func stream(t *testing.T, base string, hdr http.Header, extra url.Values, topics ...string) *rig.Stream {
	t.Helper()
	q := rig.TopicQuery(topics...)
	for k, v := range extra {
		q[k] = v
	}
	c := rig.OpenStreamWith(t, base, q, hdr)
	if c.Status != http.StatusOK {
		t.Fatalf("open stream on %s: %d %s", base, c.Status, c.Body)
	}
	t.Cleanup(c.Close)
	return c
}

func TestPresenceAcrossTwoHubs(t *testing.T) {
	h1, h2 := twoHubs(t)
	grant := auth.Grant{Subscribe: []string{"room"}, Presence: []string{"room"}}
	alice, bob := token(t, "alice", grant), token(t, "bob", grant)
	viewer := token(t, "carol", grant)
	countOnly := token(t, "dave", auth.Grant{Subscribe: []string{"room"}})
	outsider := token(t, "eve", auth.Grant{Subscribe: []string{"elsewhere"}, Presence: []string{"*"}})

	stream(t, h1.URL, alice, nil, "room")
	bobStream := stream(t, h2.URL, bob, nil, "room")
	sees := func(count int, users ...string) func() bool {
		return func() bool {
			for _, h := range []*rig.Hub{h1, h2} {
				a := presenceOf(t, h.URL, "room", viewer)
				if a.Status != http.StatusOK || a.Count != count || !slices.Equal(a.Users, users) {
					return false
				}
			}
			return true
		}
	}
	rig.Eventually(t, interval+slack, "both hubs report alice and bob", sees(2, "alice", "bob"))
	if a := presenceOf(t, h1.URL, "room", viewer); a.Hubs != 2 || a.Truncated || a.Topic != "room" {
		t.Errorf("presence = %+v, want hubs 2, not truncated", a)
	}

	// An anonymous stream is counted and never named.
	anon := stream(t, h1.URL, nil, nil, "room")
	rig.Eventually(t, interval+slack, "the anonymous stream counted, unnamed", sees(3, "alice", "bob"))
	anon.Close()

	// Without the presence grant: the count only. Without subscribe: 403.
	if a := presenceOf(t, h2.URL, "room", countOnly); a.Status != http.StatusOK || a.HasUsers || a.Count < 2 {
		t.Errorf("presence for a token without the presence grant = %+v, want 200 with the count and no users", a)
	}
	if a := presenceOf(t, h1.URL, "room", outsider); a.Status != http.StatusForbidden {
		t.Errorf("presence for a token without subscribe on the topic = %d, want 403", a.Status)
	}

	// Bob leaves: gone within one interval.
	bobStream.Close()
	rig.Eventually(t, interval+slack, "bob gone from both hubs", sees(1, "alice"))

	// Bob back on hub 2, then hub 2 is killed: its watchers are gone within the expiry.
	stream(t, h2.URL, bob, nil, "room")
	rig.Eventually(t, interval+slack, "bob back", sees(2, "alice", "bob"))
	h2.Kill()
	rig.Eventually(t, expiry+slack, "the killed hub's bob gone", func() bool {
		a := presenceOf(t, h1.URL, "room", viewer)
		return a.Count == 1 && slices.Equal(a.Users, []string{"alice"}) && a.Hubs == 1
	})
}

// TestPresenceOnACluster: on a Redis Cluster with sharded pub/sub, each topic's presence hash sits in the topic's
// slot and two hubs see each other's watchers.
func TestPresenceOnACluster(t *testing.T) {
	cluster := rig.StartCluster(t, 3, 0, 2*time.Second)
	prefix := rig.Prefix(t)
	h1 := startHubOn(t, cluster.URL(), prefix, "HUB_REDIS_SHARDED_PUBSUB=true")
	h2 := startHubOn(t, cluster.URL(), prefix, "HUB_REDIS_SHARDED_PUBSUB=true")
	grant := auth.Grant{Subscribe: []string{"*"}, Presence: []string{"*"}}
	viewer := token(t, "carol", grant)
	for i, topic := range []string{"room.a", "room.b", "room.c"} { // slots on different masters, most likely
		stream(t, h1.URL, token(t, "alice", grant), nil, topic)
		stream(t, h2.URL, token(t, "bob", grant), nil, topic)
		rig.Eventually(t, interval+slack, fmt.Sprintf("topic %d: both hubs report alice and bob", i), func() bool {
			for _, h := range []*rig.Hub{h1, h2} {
				a := presenceOf(t, h.URL, topic, viewer)
				if a.Count != 2 || a.Hubs != 2 || !slices.Equal(a.Users, []string{"alice", "bob"}) {
					return false
				}
			}
			return true
		})
	}
}

// TestPresenceBehindSentinel: two hubs on redis+sentinel:// see each other's watchers.
func TestPresenceBehindSentinel(t *testing.T) {
	sentinel := rig.StartSentinel(t, 5*time.Second)
	prefix := rig.Prefix(t)
	h1, h2 := startHubOn(t, sentinel.URL(), prefix), startHubOn(t, sentinel.URL(), prefix)
	grant := auth.Grant{Subscribe: []string{"room"}, Presence: []string{"room"}}
	stream(t, h1.URL, token(t, "alice", grant), nil, "room")
	stream(t, h2.URL, token(t, "bob", grant), nil, "room")
	viewer := token(t, "carol", grant)
	rig.Eventually(t, interval+slack, "both hubs report alice and bob", func() bool {
		for _, h := range []*rig.Hub{h1, h2} {
			a := presenceOf(t, h.URL, "room", viewer)
			if a.Count != 2 || a.Hubs != 2 || !slices.Equal(a.Users, []string{"alice", "bob"}) {
				return false
			}
		}
		return true
	})
}

// TestPresenceFrames: a stream opened with presence=1 gets event: presence frames, without an id, as the topic's
// watchers change (on another hub too); names only with the presence grant.
func TestPresenceFrames(t *testing.T) {
	h1, h2 := twoHubs(t)
	grant := auth.Grant{Subscribe: []string{"room"}, Presence: []string{"room"}}
	watcher := stream(t, h1.URL, token(t, "carol", grant), url.Values{"presence": {"1"}}, "room")
	counter := stream(t, h1.URL, token(t, "dave", auth.Grant{Subscribe: []string{"room"}}), url.Values{"presence": {"1"}}, "room")
	stream(t, h2.URL, token(t, "bob", grant), nil, "room")

	next := func(c *rig.Stream, count int) map[string]any {
		t.Helper()
		deadline := time.Now().Add(interval + 2*slack)
		for time.Now().Before(deadline) {
			f := c.NextEvent(time.Until(deadline))
			if f.Event != "presence" {
				continue
			}
			if f.HasID {
				t.Fatalf("presence frame with an id: %+v", f)
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(f.Data), &got); err != nil {
				t.Fatalf("presence frame data %q: %v", f.Data, err)
			}
			if got["count"] == float64(count) {
				return got
			}
		}
		t.Fatalf("no presence frame with count %d within %v", count, interval+2*slack)
		return nil
	}
	// carol, dave (here) and bob (on hub 2): three.
	if got := next(watcher, 3); !slices.Equal(asStrings(got["users"]), []string{"bob", "carol", "dave"}) {
		t.Errorf("frame to the grant holder = %v, want users bob carol dave", got)
	}
	if got := next(counter, 3); got["users"] != nil {
		t.Errorf("frame to a token without the presence grant = %v, want no users", got)
	}
	stream(t, h2.URL, nil, nil, "room") // an anonymous watcher on hub 2
	if got := next(watcher, 4); !slices.Equal(asStrings(got["users"]), []string{"bob", "carol", "dave"}) {
		t.Errorf("after an anonymous stream joined, frame = %v, want 4 and the same users", got)
	}
}

func asStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// TestPresenceNamesStopAtMaxUsers: past presence.max_users the names are cut, the answer says truncated, and the
// hub counts the entries it wrote cut short; the count still has every stream.
func TestPresenceNamesStopAtMaxUsers(t *testing.T) {
	h1, h2 := twoHubs(t, "HUB_PRESENCE_MAX_USERS=2")
	grant := auth.Grant{Subscribe: []string{"room"}, Presence: []string{"room"}}
	for _, u := range []string{"u1", "u2", "u3", "u4"} {
		stream(t, h1.URL, token(t, u, grant), nil, "room")
	}
	viewer := token(t, "carol", grant)
	rig.Eventually(t, interval+slack, "hub 2 sees 4 streams, 2 names, truncated", func() bool {
		a := presenceOf(t, h2.URL, "room", viewer)
		return a.Count == 4 && len(a.Users) == 2 && a.Truncated
	})
	m, err := h1.Metrics(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if m["hub_presence_entries_truncated_total"] < 1 {
		t.Errorf("hub_presence_entries_truncated_total = %v, want at least 1", m["hub_presence_entries_truncated_total"])
	}
}
