package chaos

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/pubsub"
)

// scenario is one test's world: a real redis-server, a key prefix of its own, and a client for the test's own
// publishing and reading of the truth.
type scenario struct {
	t      *testing.T
	redis  *rig.Redis
	rdb    redis.UniversalClient
	prefix string
	keys   pubsub.Keys
	pad    string // appended to every event publish sends, to make events as large as a scenario needs
}

// skipShort skips a scenario under -short: each runs real processes.
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("chaos scenarios run real processes; skipped with -short")
	}
}

// clientsFor gives a scenario a transport for its clients, closed when the test ends, and a context for their run
// that ends after timeout or with the test.
func clientsFor(t *testing.T, timeout time.Duration) (*http.Transport, context.Context) {
	tr := NewTransport(0)
	t.Cleanup(tr.CloseIdleConnections)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	return tr, ctx
}

// runConnected runs f until ctx or the test ends and waits up to within until every client has its stream open.
func runConnected(ctx context.Context, t *testing.T, f *Fleet, within time.Duration) *Fleet {
	t.Helper()
	f.Run(ctx)
	t.Cleanup(f.Stop)
	if err := f.WaitConnected(within); err != nil {
		t.Fatal(err)
	}
	return f
}

func newRig(t *testing.T, opts rig.RedisOptions) *scenario {
	t.Helper()
	skipShort(t)
	rs := rig.StartRedisWith(t, opts)
	prefix := "chaos" + strings.ReplaceAll(strings.ToLower(t.Name()), "/", "_")
	// Fail fast on a dead Redis rather than retrying in the background for long.
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr, MaxRetries: 1, DialTimeout: time.Second, ReadTimeout: 2 * time.Second})
	t.Cleanup(func() { _ = rdb.Close() })
	return &scenario{t: t, redis: rs, rdb: rdb, prefix: prefix, keys: pubsub.Keys{Prefix: prefix}}
}

// newRigWithHub is newRig on a plain redis-server with one hub on it, started with the extra settings env.
func newRigWithHub(t *testing.T, env ...string) (*scenario, *rig.Hub) {
	t.Helper()
	r := newRig(t, rig.RedisOptions{})
	return r, r.startHub(r.redis.Addr, env...)
}

// hubEnv is the configuration every scenario's hub starts from: short timers so faults show within a second,
// no connection limits (thousands of clients share one loopback address), and extra KEY=VALUE settings last.
func (r *scenario) hubEnv(redisAddr string, extra ...string) []string {
	return append([]string{
		"HUB_REDIS_URL=redis://" + redisAddr + "/0",
		"HUB_REDIS_PREFIX=" + r.prefix,
		"HUB_LOG_LEVEL=" + logLevel,
		"HUB_SSE_HEARTBEAT=250ms",
		"HUB_SSE_RETRY=200ms",
		"HUB_SSE_WRITE_TIMEOUT=2s",
		"HUB_REDIS_TAIL_CHECK=500ms",
		"HUB_SHUTDOWN_TIMEOUT=3s",
		"HUB_LIMITS_MAX_CONNECTIONS=0",
		"HUB_LIMITS_MAX_CONNECTIONS_PER_IP=0",
		"HUB_LIMITS_CONNECTION_RATE=0",
		"HUB_LIMITS_MAX_NONSTREAM_CONNECTIONS_PER_IP=0",
	}, extra...)
}

// startHub runs a hub process against redisAddr (the server itself, or a proxy in front of it).
func (r *scenario) startHub(redisAddr string, extra ...string) *rig.Hub {
	r.t.Helper()
	h, err := rig.StartHub(hubBin, "127.0.0.1:0", r.hubEnv(redisAddr, extra...), 15*time.Second)
	if err != nil {
		r.t.Fatalf("start hub: %v", err)
	}
	r.own(h)
	return h
}

// own stops h when the test ends, failing the test if h did not exit cleanly, and logs its end on a failure.
func (r *scenario) own(h *rig.Hub) {
	r.t.Cleanup(func() {
		if err := h.Stop(); err != nil {
			r.t.Errorf("hub %s did not exit cleanly: %v", h.URL, err)
		}
		if r.t.Failed() {
			r.t.Logf("hub %s logs (end):\n%s", h.URL, tail(h.Logs(), 4000))
		}
	})
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func (r *scenario) publisher(maxLen int64) *pubsub.Publisher {
	return pubsub.NewPublisher(r.rdb, pubsub.PublisherConfig{Prefix: r.prefix, MaxLen: maxLen})
}

// truth reads a topic's whole stream: the ids every client should have received, in order.
func (r *scenario) truth(topic string) []hub.ID {
	r.t.Helper()
	var out []hub.ID
	after := "-"
	for range 1000 {
		msgs, err := r.rdb.XRangeN(context.Background(), r.keys.Stream(topic), after, "+", 10000).Result()
		if err != nil {
			r.t.Fatalf("XRANGE %s: %v", r.keys.Stream(topic), err)
		}
		for _, m := range msgs {
			id, err := hub.ParseID(m.ID)
			if err != nil {
				r.t.Fatalf("stream id %q: %v", m.ID, err)
			}
			out = append(out, id)
			after = "(" + m.ID
		}
		if len(msgs) < 10000 {
			return out
		}
	}
	r.t.Fatalf("XRANGE %s: more than 10M entries", topic)
	return nil
}

func (r *scenario) truths(topics []string) map[string][]hub.ID {
	m := make(map[string][]hub.ID, len(topics))
	for _, t := range topics {
		m[t] = r.truth(t)
	}
	return m
}

func newestOf(truth map[string][]hub.ID) map[string]hub.ID {
	m := make(map[string]hub.ID, len(truth))
	for t, ids := range truth {
		if len(ids) > 0 {
			m[t] = ids[len(ids)-1]
		}
	}
	return m
}

func total(truth map[string][]hub.ID) int {
	n := 0
	for _, ids := range truth {
		n += len(ids)
	}
	return n
}

func topicNames(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s.%d", prefix, i)
	}
	return out
}

// fromStart is the cursor that asks for every stored event of topics.
func fromStart(topics []string) string {
	if len(topics) == 1 {
		return "0-0"
	}
	parts := make([]string, len(topics))
	for i, t := range topics {
		parts[i] = t + "=0-0"
	}
	return strings.Join(parts, ";")
}

// load is what a set of publishers did.
type load struct {
	mu       sync.Mutex
	acked    map[string][]hub.ID
	failures int
}

func (l *load) ack(topic, id string) {
	parsed, err := hub.ParseID(id)
	if err != nil {
		return
	}
	l.mu.Lock()
	l.acked[topic] = append(l.acked[topic], parsed)
	l.mu.Unlock()
}

func (l *load) fail() {
	l.mu.Lock()
	l.failures++
	l.mu.Unlock()
}

func (l *load) counts() (acked, failed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ids := range l.acked {
		acked += len(ids)
	}
	return acked, l.failures
}

// publish runs pubs publishers that together publish n events round-robin over topics, at about rate events per
// second in all, each through its own Redis connection. A failed publish is counted and not retried. It returns
// when all are done or ctx ends.
func (r *scenario) publish(ctx context.Context, pubs, n int, topics []string, rate float64) *load {
	l := &load{acked: make(map[string][]hub.ID)}
	var wg sync.WaitGroup
	for p := range pubs {
		wg.Go(func() {
			rdb := redis.NewClient(&redis.Options{Addr: r.redis.Addr, MaxRetries: -1, DialTimeout: 500 * time.Millisecond,
				ReadTimeout: time.Second, WriteTimeout: time.Second})
			defer rdb.Close()
			pub := pubsub.NewPublisher(rdb, pubsub.PublisherConfig{Prefix: r.prefix})
			every := time.Duration(float64(time.Second) * float64(pubs) / rate)
			next := time.Now()
			for i := p; i < n && ctx.Err() == nil; i += pubs {
				if d := time.Until(next); d > 0 {
					time.Sleep(d)
				}
				next = next.Add(every)
				topic := topics[i%len(topics)]
				id, err := pub.Publish(ctx, topic, "progress", fmt.Appendf(nil, `{"workflow":"wf-%d","seq":%d,"publisher":%d,"pad":"%s"}`, i%7, i, p, r.pad))
				if err != nil {
					l.fail()
					continue
				}
				l.ack(topic, id)
			}
		})
	}
	wg.Wait()
	return l
}

// metric returns a series' value from a scrape, 0 when absent.
func metric(t *testing.T, h *rig.Hub, series string) float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m, err := h.Metrics(ctx)
	if err != nil {
		t.Fatalf("scrape %s/metrics: %v", h.URL, err)
	}
	return m[series]
}

// delivered reads the streams of topics, waits until every client of f has their newest events, and checks that
// each got every one once, in order, and no reset: noReset says why none is due. It returns the streams and the tally.
func (r *scenario) delivered(f *Fleet, topics []string, noReset string) (map[string][]hub.ID, Tally) {
	t := r.t
	t.Helper()
	truth := r.truths(topics)
	if _, err := f.WaitCaughtUp(newestOf(truth), 20*time.Second); err != nil {
		t.Errorf("clients did not catch up: %v", err)
	}
	tally := verify(t, f, truth)
	if tally.Resets != 0 {
		t.Errorf("%d resets: %s, so none is due", tally.Resets, noReset)
	}
	return truth, tally
}

// verify checks a fleet against the streams, fails the test on any loss, duplicate, reorder or unknown id, and
// returns the tally.
func verify(t *testing.T, f *Fleet, truth map[string][]hub.ID) Tally {
	t.Helper()
	tally, bad := f.Check(truth, hub.ID{})
	if !tally.Clean() {
		t.Errorf("delivery not exactly once in order: %v", tally)
		for _, b := range bad {
			t.Errorf("  %s", b)
		}
	}
	return tally
}

// record adds the scenario's row to the report and logs it.
func record(t *testing.T, row Row) {
	delivery := "delivery not checked"
	if row.Checked {
		delivery = fmt.Sprintf("delivered %d, lost %d, dup %d, reordered %d, resets %d",
			row.Delivered, row.Lost, row.Duplicated, row.Reordered, row.Resets)
	}
	t.Logf("%s: published %d, %s, reconnects %d, recovery %v; %s", row.Scenario, row.Published, delivery,
		row.Reconnects, row.Recovery.Round(time.Millisecond), row.Note)
	report.Add(row)
}

// scale returns soakN under HUB_CHAOS_SOAK, n otherwise.
func scale(n, soakN int) int {
	if soak {
		return soakN
	}
	return n
}

// measure starts recording delivery latencies on every client of f.
func measure(f *Fleet) {
	for _, c := range f.Clients {
		c.Measure(true)
	}
}

// logLevel is the hubs' log level: warn, or HUB_CHAOS_LOG_LEVEL to see every stream's end.
var logLevel = cmp.Or(os.Getenv("HUB_CHAOS_LOG_LEVEL"), "warn")

// newest returns each topic's newest stream id now.
func (r *scenario) newest(topics []string) map[string]hub.ID {
	r.t.Helper()
	m := make(map[string]hub.ID, len(topics))
	for _, t := range topics {
		msgs, err := r.rdb.XRevRangeN(context.Background(), r.keys.Stream(t), "+", "-", 1).Result()
		if err != nil {
			r.t.Fatalf("XREVRANGE %s: %v", t, err)
		}
		if len(msgs) == 1 {
			m[t], _ = hub.ParseID(msgs[0].ID)
		}
	}
	return m
}
