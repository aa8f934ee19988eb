package chaos

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/rig"
)

// runMixed runs a mixedFleet against base until the test ends (two minutes at most) and waits until every client is
// connected.
func runMixed(t *testing.T, base string, topics []string, multi int) (*Fleet, context.Context) {
	t.Helper()
	tr, ctx := clientsFor(t, 2*time.Minute)
	return runConnected(ctx, t, mixedFleet([]string{base}, topics, multi, tr), 10*time.Second), ctx
}

// mixedFleet subscribes two clients to each topic alone and multi clients to all of them at once (cursor a=ID;b=ID),
// every one from the start of the streams.
func mixedFleet(base []string, topics []string, multi int, transport http.RoundTripper) *Fleet {
	single := 2 * len(topics)
	return NewFleet(single+multi, func(i int) ClientConfig {
		ts := topics
		if i < single {
			ts = topics[i%len(topics) : i%len(topics)+1]
		}
		return ClientConfig{URLs: base, Topics: ts, LastEventID: fromStart(ts), Transport: transport}
	})
}

// Scenario 1: the hub's pub/sub connection is killed every second while three publishers publish. Each kill loses
// whatever was in flight on the channel; the hub reads it back from the stream when it resubscribes, so no client
// sees a reset or a reconnect. What it tests is that resubscription repair under load: a kill never loses a message
// while the connection stays up, so the prev-chain repair (a live message whose prev is not the last id broadcast)
// is not needed here, and removing it still passes. pubsub's TestSubscriberRepairsALostMessage and the root
// package's TestGapRepairDeliversLostMessages lose a message on a live connection and check that repair.
func TestChaos01PubSubKilled(t *testing.T) {
	r, h := newRigWithHub(t)
	topics := topicNames("s1", 5)
	fleet, ctx := runMixed(t, h.URL, topics, 10)
	measure(fleet)

	n := scale(5000, 50000)
	killCtx, stopKills := context.WithCancel(ctx)
	var kills, killed int64
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-killCtx.Done():
				return
			case <-tick.C:
				if k, err := r.rdb.Do(killCtx, "CLIENT", "KILL", "TYPE", "pubsub").Int64(); err == nil {
					kills++
					killed += k
				}
			}
		}
	})
	published := time.Now()
	l := r.publish(ctx, 3, n, topics, 1000)
	stopKills()
	wg.Wait()
	_, failed := l.counts()
	truth := r.truths(topics)
	if _, err := fleet.WaitCaughtUp(newestOf(truth), 20*time.Second); err != nil {
		t.Errorf("clients did not catch up after the last publish: %v", err)
	}
	p99, worst := fleet.Latency(fleet.Clients)
	tally := verify(t, fleet, truth)
	if tally.Resets != 0 || fleet.Reconnects() != 0 {
		t.Errorf("resets %d, reconnects %d: a pub/sub drop must not reach the clients", tally.Resets, fleet.Reconnects())
	}
	if kills < 3 || killed < 3 {
		t.Errorf("CLIENT KILL TYPE pubsub ran %d times and killed %d connections, want at least 3 of each", kills, killed)
	}
	resubs := metric(t, h, "hub_redis_resubscriptions_total")
	repairs := metric(t, h, "hub_redis_gap_repairs_total")
	record(t, Row{Scenario: "01 pub/sub killed every 1s", Published: total(truth), Reconnects: fleet.Reconnects(), Recovery: worst,
		Note: fmt.Sprintf("%d clients, %d kills over %v, %d publish errors, %.0f resubscriptions, %.0f gap repairs, latency p99 %v",
			len(fleet.Clients), kills, time.Since(published).Round(100*time.Millisecond), failed, resubs, repairs, p99)}.Fill(tally))
}

// readyWatch polls a hub's /readyz and remembers whether it saw 503 and, after that, 200 again.
type readyWatch struct {
	mu              sync.Mutex
	down, backUp    bool
	downAt, upAgain time.Time
	stop            context.CancelFunc
	done            chan struct{}
}

func watchReady(h *rig.Hub) *readyWatch {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	w := &readyWatch{stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for ctx.Err() == nil {
			code := h.Ready()
			w.mu.Lock()
			switch {
			case code == http.StatusServiceUnavailable && !w.down:
				w.down, w.downAt = true, time.Now()
			case code == http.StatusOK && w.down && !w.backUp:
				w.backUp, w.upAgain = true, time.Now()
			}
			w.mu.Unlock()
			time.Sleep(25 * time.Millisecond)
		}
	}()
	return w
}

// result stops watching and returns what was seen.
func (w *readyWatch) result() (down, backUp bool, upAgain time.Time) {
	w.stop()
	<-w.done
	return w.down, w.backUp, w.upAgain
}

// faultUnderLoad publishes n events over topics at rate while, after lead, fault runs and, hold later, heal. It
// returns the publishers' load and the recovery: how long after the heal every client had what the streams held at
// the heal.
func (r *scenario) faultUnderLoad(ctx context.Context, f *Fleet, n int, topics []string, rate float64, lead, hold time.Duration,
	fault, heal func()) (*load, time.Duration) {
	var l *load
	var wg sync.WaitGroup
	wg.Go(func() { l = r.publish(ctx, 2, n, topics, rate) })
	defer wg.Wait()
	time.Sleep(lead)
	fault()
	time.Sleep(hold)
	heal()
	recovery, err := f.WaitCaughtUp(r.newest(topics), 20*time.Second)
	if err != nil {
		r.t.Errorf("clients did not catch up after the heal: %v", err)
	}
	wg.Wait()
	return l, recovery
}

// checkAcked fails the test when an event that Redis acknowledged is not in the stream.
func checkAcked(t *testing.T, l *load, truth map[string][]hub.ID) {
	t.Helper()
	for topic, ids := range l.acked {
		in := make(map[hub.ID]bool, len(truth[topic]))
		for _, id := range truth[topic] {
			in[id] = true
		}
		for _, id := range ids {
			if !in[id] {
				t.Errorf("acknowledged event %s of %s is not in the stream", id, topic)
			}
		}
	}
}

// checkOpen fails the test when a client's stream ended or went silent longer than allowed.
func checkOpen(t *testing.T, f *Fleet, silence time.Duration) time.Duration {
	t.Helper()
	var worst time.Duration
	for i, c := range f.Clients {
		st := c.Stats()
		worst = max(worst, st.MaxSilence)
		if st.Connects != 1 || st.MaxSilence > silence {
			t.Errorf("client %d: %d streams, longest silence %v; want 1 stream that is never silent beyond %v",
				i, st.Connects, st.MaxSilence, silence)
		}
	}
	return worst
}

// The proxy scenario: every hub↔Redis connection is cut and new ones are refused for 2 s, then the path heals.
// Publishers reach Redis directly all along, so the hub must repair what it missed while blind.
func TestChaos00ProxyPartition(t *testing.T) {
	r := newRig(t, rig.RedisOptions{})
	px, err := NewProxy(r.redis.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	o := r.redisOutage(r.startHub(px.Addr), outageSpec{prefix: "px", hold: time.Duration(scale(2, 10)) * time.Second,
		cut: px.Cut, heal: func() {
			if err := px.Heal(); err != nil {
				t.Fatalf("heal the proxy: %v", err)
			}
		}, during: "during the partition", noReset: "nothing was trimmed or lost"})
	_, failed := o.load.counts()
	record(t, Row{Scenario: "00 proxy: cut hub↔Redis 2s", Published: total(o.truth), Reconnects: o.fleet.Reconnects(), Recovery: o.recovery,
		Note: fmt.Sprintf("%d clients, %d publish errors, /readyz 200 again %v after heal, longest silence %v",
			len(o.fleet.Clients), failed, o.upAgain.Sub(o.healed).Round(time.Millisecond), o.silence.Round(time.Millisecond))}.Fill(o.tally))
}

// Scenario 2: Redis is killed (SIGKILL) mid-stream and started again from its append-only file (fsync always).
// Streams stay open with their heartbeats, /readyz fails then recovers, and every event Redis acknowledged reaches
// every client once, in order.
func TestChaos02RedisRestartAOF(t *testing.T) {
	r := newRig(t, rig.RedisOptions{AppendOnly: true})
	o := r.redisOutage(r.startHub(r.redis.Addr), outageSpec{prefix: "s2", hold: time.Duration(scale(1500, 8000)) * time.Millisecond,
		cut: r.redis.Kill, heal: func() {
			if err := r.redis.Start(); err != nil {
				t.Fatalf("restart redis-server: %v", err)
			}
		}, during: "around the restart", noReset: "Redis kept every acknowledged event"})
	checkAcked(t, o.load, o.truth)
	acked, failed := o.load.counts()
	if failed == 0 {
		t.Errorf("no publish failed while Redis was down: the fault did not happen")
	}
	record(t, Row{Scenario: "02 Redis kill -9, restart with AOF", Published: total(o.truth), Reconnects: o.fleet.Reconnects(), Recovery: o.recovery,
		Note: fmt.Sprintf("%d clients, %d acknowledged (all stored), %d refused while down, /readyz 200 again %v after restart, longest silence %v",
			len(o.fleet.Clients), acked, failed, o.upAgain.Sub(o.healed).Round(time.Millisecond), o.silence.Round(time.Millisecond))}.Fill(o.tally))
}

// outageSpec is a fault that takes a hub's Redis away under load and brings it back.
type outageSpec struct {
	prefix    string        // of the topics' names
	hold      time.Duration // from cut to heal
	cut, heal func()
	during    string // names the fault in the /readyz message: "during the partition"
	noReset   string // why no client may get a reset
}

// outage is what the hub, its clients and the publishers went through.
type outage struct {
	fleet    *Fleet
	load     *load
	truth    map[string][]hub.ID
	tally    Tally
	recovery time.Duration // from the heal until every client had what the streams held at the heal
	healed   time.Time     // when heal returned
	upAgain  time.Time     // when /readyz answered 200 again
	silence  time.Duration // the longest silence of a client's stream
}

// redisOutage runs the mixed fleet on three topics of h and 500 events/s of publishers while o's fault happens,
// then checks what such a fault must leave: every client caught up on every stored event, once and in order, with no
// reset, on the stream it opened, and /readyz answered 503 and then 200 again.
func (r *scenario) redisOutage(h *rig.Hub, o outageSpec) outage {
	t := r.t
	topics := topicNames(o.prefix, 3)
	fleet, ctx := runMixed(t, h.URL, topics, 4)
	rw := watchReady(h)
	res := outage{fleet: fleet}
	res.load, res.recovery = r.faultUnderLoad(ctx, fleet, scale(2500, 10000), topics, 500, time.Second, o.hold, o.cut, func() {
		o.heal()
		res.healed = time.Now()
	})
	down, up, upAt := rw.result()
	res.upAgain = upAt
	res.truth, res.tally = r.delivered(fleet, topics, o.noReset)
	res.silence = checkOpen(t, fleet, 2*time.Second)
	if !down || !up {
		t.Errorf("/readyz %s: saw 503 %v, then 200 %v; want both", o.during, down, up)
	}
	return res
}

// Scenario 3: Redis restarts without persistence and comes back empty. The clients' positions no longer exist, so
// each must get an event: reset before the first event of the new history; nothing is skipped silently. A client
// that reconnects afterwards with an old position gets a reset too.
func TestChaos03RedisRestartEmpty(t *testing.T) {
	r, h := newRigWithHub(t)
	topics := topicNames("s3", 3)
	fleet, ctx := runMixed(t, h.URL, topics, 4)
	n := scale(300, 3000)
	r.publish(ctx, 1, n, topics, 2000)
	before := r.truths(topics)
	if _, err := fleet.WaitCaughtUp(newestOf(before), 10*time.Second); err != nil {
		t.Fatalf("before the restart: %v", err)
	}
	r.redis.Kill()
	if err := r.redis.Start(); err != nil {
		t.Fatalf("restart redis-server: %v", err)
	}
	restarted := time.Now()
	r.publish(ctx, 1, n, topics, 2000)
	after := r.truths(topics)
	truth := make(map[string][]hub.ID, len(topics))
	for _, tp := range topics {
		truth[tp] = append(append([]hub.ID(nil), before[tp]...), after[tp]...)
	}
	if _, err := fleet.WaitCaughtUp(newestOf(after), 20*time.Second); err != nil {
		t.Errorf("clients did not reach the new history: %v", err)
	}
	recovery := time.Since(restarted) // includes publishing the new history
	tr := NewTransport(0)
	defer tr.CloseIdleConnections()
	late := NewClient(ClientConfig{URLs: []string{h.URL}, Topics: topics[:1], Transport: tr,
		LastEventID: before[topics[0]][len(before[topics[0]])-1].String()})
	late.Run(ctx)
	defer late.Stop()
	lateFleet := &Fleet{Clients: []*Client{late}}
	if _, err := lateFleet.WaitCaughtUp(newestOf(after), 10*time.Second); err != nil {
		t.Errorf("a client resuming from a lost position: %v", err)
	}
	all := &Fleet{Clients: append(append([]*Client(nil), fleet.Clients...), late)}
	tally := verify(t, all, truth)
	for i, c := range all.Clients {
		for _, tp := range c.Topics() {
			if !resetBefore(c.Received(tp), after[tp][0]) {
				t.Errorf("client %d topic %s: no reset before the first event of the new history %v", i, tp, after[tp][0])
			}
		}
	}
	record(t, Row{Scenario: "03 Redis restart, data lost", Published: total(truth), Reconnects: all.Reconnects(), Recovery: recovery,
		Note: fmt.Sprintf("%d clients (one resuming late from a lost id), %d events excused by a reset, reset before the new history on every topic of every client",
			len(all.Clients), tally.Excused)}.Fill(tally))
}

// resetBefore reports whether a reset came before first among got.
func resetBefore(got []Got, first hub.ID) bool {
	for _, g := range got {
		if g.Reset {
			return true
		}
		if !g.ID.Less(first) {
			return false
		}
	}
	return false
}
