package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/pubsub"
)

// Scenarios 11 to 15: publishing through a failover. Three hubs share a Redis Cluster (3 masters, 3 replicas) or a
// Sentinel-watched pair; publishers POST /publish to them round robin, every event with its own Idempotency-Key, half
// of them on one busy topic. Cluster (11 sharded pub/sub, 13 classic): a manual failover of the busy topic's master,
// a SIGKILL of the master that took over, then the busy topic's slot migrated to another master. Sentinel (12): a
// switchover, then a SIGKILL of the new master; 14: three sentinels and passwords, the master SIGKILLed; 15: the
// master SIGKILLed with its replica 200 ms behind, which loses acknowledged events (lost_history_test.go). Every
// publish answers 202 (the hubs retry inside redis.publish_retry), every event is stored once and delivered once, in
// order, to a client on each hub; the hubs are ready again after each fault and their metrics count the retries.

func TestChaos11PublishThroughClusterFailover(t *testing.T) {
	runClusterFaults(t, "s11", true)
}

func TestChaos12PublishThroughSentinelFailover(t *testing.T) {
	s, r := newSentinelRig(t, rig.SentinelOptions{DownAfter: time.Second})
	topics := topicNames("s12", 6)
	r.run(topics, fault{"switchover", func() {
		// SENTINEL FAILOVER alone is not coordinated: the old master takes writes until the sentinel tells it to
		// follow the new one (20 s here), then drops them in the resync. A switchover pauses writes on it first and
		// points it at the new master once promoted, as an operator would; the paused publishes then meet
		// READONLY, which the hubs retry.
		old := s.Master.Client()
		if err := old.Do(context.Background(), "CLIENT", "PAUSE", 10000, "WRITE").Err(); err != nil {
			t.Fatalf("CLIENT PAUSE WRITE on %s: %v", s.Master.Addr, err)
		}
		if err := s.Failover(context.Background()); err != nil {
			t.Fatalf("SENTINEL FAILOVER: %v", err)
		}
		r.poll("the sentinel promotes "+s.Replica.Addr, func() bool { return s.CurrentMaster() == s.Replica.Addr })
		host, port, _ := net.SplitHostPort(s.Replica.Addr)
		if err := old.Do(context.Background(), "REPLICAOF", host, port).Err(); err != nil {
			t.Fatalf("REPLICAOF %s on %s: %v", s.Replica.Addr, s.Master.Addr, err)
		}
		r.waitInSync(s.Master)
		if err := old.Do(context.Background(), "CLIENT", "UNPAUSE").Err(); err != nil {
			t.Fatalf("CLIENT UNPAUSE on %s: %v", s.Master.Addr, err)
		}
	}}, fault{"kill the new master", func() {
		s.Replica.Kill()
		r.poll("the sentinel promotes "+s.Master.Addr+" again", func() bool { return s.CurrentMaster() == s.Master.Addr })
	}})
}

// failoverRig is a rig on a replicated Redis with three hubs and the keyed publishers.
type failoverRig struct {
	*scenario
	hubs  []*rig.Hub
	lossy bool // the faults may lose acknowledged events (verifyLossy)
}

// newSentinelRig starts, unless under -short, the sentinel rig opts describes and a failoverRig on it.
func newSentinelRig(t *testing.T, opts rig.SentinelOptions) (*rig.Sentinel, *failoverRig) {
	t.Helper()
	skipShort(t)
	s := rig.StartSentinelWith(t, opts)
	return s, newFailoverRig(t, s.URL())
}

func newFailoverRig(t *testing.T, url string, env ...string) *failoverRig {
	rdb, err := pubsub.NewClient(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	prefix := "chaos" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "_"))
	r := &failoverRig{scenario: &scenario{t: t, rdb: rdb, prefix: prefix, keys: pubsub.Keys{Prefix: prefix}}}
	// The publish rate limit is per address, and every publisher here shares 127.0.0.1.
	env = append([]string{"HUB_REDIS_URL=" + url, "HUB_LIMITS_PUBLISH_RATE=0", "HUB_REDIS_PUBLISH_RETRY=5s"}, env...)
	for range 3 {
		r.hubs = append(r.hubs, r.startHub("unused:0", env...)) // HUB_REDIS_URL above wins over the rig's default
	}
	return r
}

func (r *failoverRig) poll(what string, cond func() bool) {
	r.t.Helper()
	if err := poll(30*time.Second, func() (bool, string) { return cond(), what }); err != nil {
		r.t.Fatal(err)
	}
}

// waitInSync waits until the old master follows the new one with its link up: Redis replicates asynchronously, so
// killing a master whose only replica is not yet following it loses what it acknowledged, keys and all.
func (r *failoverRig) waitInSync(s *rig.Redis) {
	if err := rig.WaitInSync(s.Addr, "", 30*time.Second); err != nil {
		r.t.Fatal(err)
	}
}

// waitMaster waits until want is the master of topic's slot and the cluster is whole again.
func (r *failoverRig) waitMaster(c *rig.Cluster, topic string, want *rig.Redis, what string) {
	r.poll(what, func() bool { m, _ := c.MasterOf(r.keys.Stream(topic)); return m == want })
}

// fault is one thing done to Redis under load; do returns once Redis has settled after it.
type fault struct {
	name string
	do   func()
}

// run starts a client on each hub and the keyed publishers, applies the faults one after the other under load (each
// once 200 more publishes were answered, 3000 under HUB_CHAOS_SOAK, and each followed by every hub ready again), publishes a while longer,
// then checks what was stored and delivered, and records the row. It returns the hubs' scraped metrics. The clients
// run until the test ends.
func (r *failoverRig) run(topics []string, faults ...fault) []map[string]float64 {
	t := r.t
	urls := make([]string, len(r.hubs))
	for i, h := range r.hubs {
		urls[i] = h.URL
	}
	tr, ctx := clientsFor(t, 4*time.Minute)
	fleet := runConnected(ctx, t, NewFleet(len(r.hubs), func(i int) ClientConfig {
		return ClientConfig{URLs: append(urls[i:len(urls):len(urls)], urls[:i]...), Topics: topics,
			LastEventID: fromStart(topics), Transport: tr, KeepData: true}
	}), 15*time.Second)
	load := &keyedLoad{urls: urls, topics: topics, client: &http.Client{Transport: tr, Timeout: 15 * time.Second}, stop: make(chan struct{})}
	ready := watchReadiness(r.hubs)
	var wg sync.WaitGroup
	wg.Go(func() { load.run(ctx, 6, 25*time.Millisecond) })
	between := scale(200, 3000) // publishes before each fault and after the last
	for _, f := range faults {
		load.waitAcked(t, load.acked()+between)
		t.Logf("%s after %d publishes", f.name, load.acked())
		f.do()
		r.waitAllReady(f.name)
		t.Logf("%s done after %d publishes", f.name, load.acked())
	}
	load.waitAcked(t, load.acked()+between)
	close(load.stop)
	wg.Wait()
	notReady := ready.stop()
	return r.finish(ctx, fleet, load, topics, notReady)
}

// waitAllReady fails the test unless every hub answers /readyz 200 within 30 s of a fault.
func (r *failoverRig) waitAllReady(after string) {
	for _, h := range r.hubs {
		if err := h.WaitReady(30 * time.Second); err != nil {
			r.t.Fatalf("after %s: %v", after, err)
		}
	}
}

// finish checks the clients and the stored keys, scrapes the hubs, and records the row.
func (r *failoverRig) finish(ctx context.Context, fleet *Fleet, load *keyedLoad, topics []string, notReady []int) []map[string]float64 {
	t := r.t
	truth := r.truths(topics)
	if _, err := fleet.WaitCaughtUp(newestOf(truth), 30*time.Second); err != nil {
		t.Errorf("clients did not catch up: %v", err)
	}
	seqs := checkPublisherOrder(t, fleet)
	stored := r.storedKeys(topics)
	var tally Tally
	lostNote := ""
	if r.lossy {
		tally, lostNote = r.verifyLossy(fleet, truth, load, stored)
	} else {
		tally = verify(t, fleet, truth)
		load.check(t, stored)
		if tally.Resets > 0 { // every acknowledged event is stored (checked above): no history was lost
			t.Errorf("%d resets, but Redis lost nothing; a reset is owed only where history was lost", tally.Resets)
		}
	}
	var scraped []map[string]float64
	retried, waited := 0.0, 0.0
	for _, h := range r.hubs {
		m, err := h.Metrics(ctx)
		if err != nil {
			t.Fatal(err)
		}
		scraped = append(scraped, m)
		for _, o := range []string{"ok", "duplicate", "failed"} {
			retried += m[`hub_publish_retried_total{outcome="`+o+`"}`]
		}
		waited += m["hub_publish_retry_seconds_sum"]
		if f := m[`hub_publish_retried_total{outcome="failed"}`]; f > 0 {
			t.Errorf("hub %s: hub_publish_retried_total{outcome=\"failed\"} = %v, want 0 (every retry within redis.publish_retry)", h.URL, f)
		}
	}
	record(t, Row{Scenario: t.Name(), Published: total(truth), Reconnects: fleet.Reconnects(), Note: fmt.Sprintf(
		"%d keyed publishes, %d answered other than 202 (sent again), %d duplicates answered; the hubs retried %.0f (%.1f s in all); longest POST %v; %d per-publisher sequences checked; /readyz not 200 in %v samples per hub%s",
		load.sent, load.refused, load.dups, retried, waited, load.longest.Round(time.Millisecond), seqs, notReady, lostNote)}.Fill(tally))
	return scraped
}

// storedKeys reads every topic's stream and counts each idempotency key found in the events' data.
func (r *failoverRig) storedKeys(topics []string) map[string]int {
	out := map[string]int{}
	for _, topic := range topics {
		msgs, err := r.rdb.XRange(context.Background(), r.keys.Stream(topic), "-", "+").Result()
		if err != nil {
			r.t.Fatalf("XRANGE %s: %v", topic, err)
		}
		for _, m := range msgs {
			d, _ := m.Values["d"].(string)
			if i := strings.Index(d, `"key":"`); i >= 0 {
				k := d[i+7:]
				out[k[:strings.IndexByte(k, '"')]]++
			}
		}
	}
	return out
}

// keyedLoad is publishers that POST /publish round robin over the hubs, each event with its own key, sending a
// request again (same key) until it answers 202.
type keyedLoad struct {
	urls    []string
	topics  []string
	client  *http.Client
	stop    chan struct{}
	mu      sync.Mutex
	ids     map[string]string // key → the id 202 answered
	topicOf map[string]string // key → its topic
	sent    int               // publishes
	refused int               // answers other than 202 (each followed by the same request again)
	dups    int               // 202 answers marked duplicate
	longest time.Duration     // first send to 202
	errs    []string
}

func (l *keyedLoad) run(ctx context.Context, publishers int, every time.Duration) {
	l.mu.Lock() // acked may already be polling from the test's goroutine
	l.ids, l.topicOf = map[string]string{}, map[string]string{}
	l.mu.Unlock()
	var wg sync.WaitGroup
	for p := range publishers {
		wg.Go(func() {
			tick := time.NewTicker(every)
			defer tick.Stop()
			for seq := 0; ; seq++ {
				select {
				case <-l.stop:
					return
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				l.publishOne(ctx, p, seq)
			}
		})
	}
	wg.Wait()
}

func (l *keyedLoad) publishOne(ctx context.Context, p, seq int) {
	key := fmt.Sprintf("p%d-%d", p, seq)
	topic := l.topics[(p+seq)%len(l.topics)]
	if seq%2 == 0 {
		topic = l.topics[0] // the busy topic: half of every publisher's events
	}
	body := fmt.Sprintf(`{"topic":%q,"data":{"workflow":"wf-%d","seq":%d,"key":%q}}`, topic, p, seq, key)
	began := time.Now()
	for attempt := 0; ctx.Err() == nil; attempt++ {
		url := l.urls[(p+seq+attempt)%len(l.urls)] + "/publish"
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewBufferString(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		id, dup, status, err := postPublish(l.client, req)
		l.mu.Lock()
		if status == http.StatusAccepted {
			l.sent++
			l.ids[key], l.topicOf[key] = id, topic
			l.longest = max(l.longest, time.Since(began))
			if dup {
				l.dups++
			}
			l.mu.Unlock()
			return
		}
		l.refused++
		if len(l.errs) < 10 {
			l.errs = append(l.errs, fmt.Sprintf("%s %s: %d %v", url, key, status, err))
		}
		l.mu.Unlock()
		time.Sleep(100 * time.Millisecond)
	}
}

func (l *keyedLoad) acked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.ids)
}

func (l *keyedLoad) waitAcked(t *testing.T, n int) {
	t.Helper()
	if err := poll(60*time.Second, func() (bool, string) {
		return l.acked() >= n, fmt.Sprintf("%d publishes answered 202, want %d", l.acked(), n)
	}); err != nil {
		t.Fatal(err)
	}
}

// check fails the test unless every publish answered 202 on its first request and its key is stored exactly once.
func (l *keyedLoad) check(t *testing.T, stored map[string]int) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.refused > 0 {
		t.Errorf("%d requests answered other than 202 (the hubs' retries should have covered the faults): %q", l.refused, l.errs)
	}
	for key := range l.ids {
		if stored[key] != 1 {
			t.Errorf("key %s answered 202 and is stored %d times, want once", key, stored[key])
		}
	}
	for key, n := range stored {
		if _, ok := l.ids[key]; !ok {
			t.Errorf("key %s stored %d times but never answered 202", key, n)
		}
	}
}

// postPublish sends one POST /publish and reads the answer: the id, whether it was a duplicate, the status.
func postPublish(c *http.Client, req *http.Request) (id string, duplicate bool, status int, err error) {
	resp, err := c.Do(req)
	if err != nil {
		return "", false, 0, err
	}
	defer resp.Body.Close()
	var body struct {
		ID        string `json:"id"`
		Duplicate bool   `json:"duplicate"`
		Error     string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return "", false, resp.StatusCode, err
	}
	if body.Error != "" {
		err = errors.New(body.Error)
	}
	return body.ID, body.Duplicate, resp.StatusCode, err
}
