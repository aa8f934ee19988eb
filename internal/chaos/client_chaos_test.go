package chaos

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/hub"
)

// Scenario 6: among 500 clients of a topic, 10 stop reading (their TCP windows fill). The hub evicts those 10, the
// other 490 keep their latency, and when the 10 read again they reconnect and replay exactly what they missed.
// A loopback socket swallows megabytes before a write blocks, so the stalled clients also follow a bulk topic of
// 32 KiB events: it fills their windows in seconds without making the 490 parse gigabytes.
func TestChaos06SlowConsumers(t *testing.T) {
	// A short write deadline: a stalled client whose queue is lagging behind a repair (not evicted for that) is
	// still cut when its socket stays full, as on a loaded machine where repairs come often.
	r, h := newRigWithHub(t, "HUB_SSE_CLIENT_BUFFER=128", "HUB_SSE_WRITE_TIMEOUT=3s")
	r.pad = strings.Repeat("x", 100)
	topics, bulk := []string{"s6"}, "s6.bulk"
	slow := NewTransport(4096)
	t.Cleanup(slow.CloseIdleConnections)
	fast, ctx := clientsFor(t, 2*time.Minute)
	n, stalled := scale(500, 2000), 10
	fleet := runConnected(ctx, t, NewFleet(n, func(i int) ClientConfig {
		cfg := ClientConfig{URLs: []string{h.URL}, Topics: topics, LastEventID: "0-0", Transport: fast}
		if i < stalled {
			cfg.Topics, cfg.LastEventID, cfg.Transport = []string{topics[0], bulk}, fromStart([]string{topics[0], bulk}), slow
		}
		return cfg
	}), 20*time.Second)
	keepers := fleet.Clients[stalled:]

	// The same traffic twice, first with every client reading, then with the 10 stalled: the readers' latency is
	// compared between the two, so the load of the test itself cancels out.
	traffic := func(small, large int) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			pad := strings.Repeat("x", 32<<10)
			pub := r.publisher(10000)
			for i := range large {
				if _, err := pub.Publish(ctx, bulk, "progress", fmt.Appendf(nil, `{"workflow":"bulk","seq":%d,"pad":"%s"}`, i, pad)); err != nil {
					t.Errorf("publish bulk: %v", err)
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
		}()
		r.publish(ctx, 1, small, topics, 50)
		<-done
	}
	measure(fleet)
	traffic(50, 30)
	if _, err := fleet.WaitCaughtUp(r.newest(append(topics, bulk)), 20*time.Second); err != nil {
		t.Fatalf("baseline: %v", err)
	}
	p99Before, _ := fleet.Latency(keepers)

	measure(fleet)
	for _, c := range fleet.Clients[:stalled] {
		c.Pause()
	}
	traffic(scale(150, 1500), 250) // 8 MiB of bulk: more than a loopback socket and a queue of 128 hold
	if _, err := (&Fleet{Clients: keepers}).WaitCaughtUp(r.newest(topics), 20*time.Second); err != nil {
		t.Errorf("the %d that keep reading fell behind: %v", len(keepers), err)
	}
	p99During, _ := fleet.Latency(keepers)
	// How much a stalled socket swallows depends on the kernel's buffer autotuning and on how loaded the machine
	// is, so bulk keeps coming (bounded: 10 more rounds of 16 events of 32 KiB) until every stalled stream is closed.
	evicted := 0.0
	bulkPub, pad := r.publisher(10000), strings.Repeat("x", 32<<10)
	for round := 0; ; round++ {
		err := poll(3*time.Second, func() (bool, string) {
			// slow: evicted from a full queue; write_error: a write missed its deadline; client_gone: the kernel gave up
			// on the closed window first (TCP_USER_TIMEOUT = write_timeout) and net/http saw the connection die.
			// Only the stalled ten can be closed here: the others are checked to keep their one stream.
			evicted = metric(t, h, `hub_sse_connections_closed_total{reason="slow"}`) + metric(t, h, `hub_sse_connections_closed_total{reason="write_error"}`) +
				metric(t, h, `hub_sse_connections_closed_total{reason="client_gone"}`)
			return evicted >= float64(stalled), fmt.Sprintf("%v of %d stalled streams closed", evicted, stalled)
		})
		if err == nil {
			break
		}
		if round == 10 {
			m, _ := h.Metrics(ctx)
			closed := map[string]float64{}
			for k, v := range m {
				if strings.HasPrefix(k, "hub_sse_connections_closed_total") || k == "hub_sse_connections_active" {
					closed[k] = v
				}
			}
			t.Errorf("stalled clients not evicted: %v; %v", err, closed)
			break
		}
		for i := range 16 {
			if _, err := bulkPub.Publish(ctx, bulk, "progress", fmt.Appendf(nil, `{"workflow":"bulk","more":%d,"pad":"%s"}`, round*16+i, pad)); err != nil {
				t.Fatalf("publish bulk: %v", err)
			}
		}
	}
	slowEvicted := metric(t, h, `hub_sse_connections_closed_total{reason="slow"}`)

	resumed := time.Now()
	for _, c := range fleet.Clients[:stalled] {
		c.Resume()
	}
	truth := r.truths(append(topics, bulk))
	recovery, err := fleet.WaitCaughtUp(newestOf(truth), 60*time.Second)
	if err != nil {
		t.Errorf("after resuming: %v", err)
	}
	recovery = min(recovery, time.Since(resumed))
	tally := verify(t, fleet, truth)
	for i, c := range fleet.Clients {
		st := c.Stats()
		if i < stalled && st.Connects < 2 || i >= stalled && st.Connects != 1 {
			t.Errorf("client %d (stalled %v): %d streams; want the stalled ones evicted and back, the others never cut", i, i < stalled, st.Connects)
		}
	}
	if limit := 3*p99Before + time.Second; p99During > limit { // the readers share two cores with the test
		t.Errorf("p99 latency of the %d readers: %v before, %v while %d stalled; want at most %v", len(keepers), p99Before, p99During, stalled, limit)
	}
	record(t, Row{Scenario: "06 slow consumers (10 of 500 stall)", Published: total(truth), Reconnects: fleet.Reconnects(), Recovery: recovery,
		Note: fmt.Sprintf("%d clients, buffer 128; stalled streams closed: %.0f as slow, %.0f at the write deadline or by the kernel; p99 latency of the 490 readers %v before, %v during",
			n, slowEvicted, evicted-slowEvicted, p99Before, p99During)}.Fill(tally))
}

// Scenario 7: a client comes back after history was trimmed past its position (history.max_len 100). It gets an
// event: reset naming the oldest stored event, then everything from there in order; a client that stayed connected
// sees no reset at all.
func TestChaos07HistoryTrimmed(t *testing.T) {
	r, h := newRigWithHub(t, "HUB_HISTORY_MAX_LEN=100")
	topics := []string{"s7"}
	tr, ctx := clientsFor(t, 2*time.Minute)
	stayed := runConnected(ctx, t, NewFleet(5, func(int) ClientConfig {
		return ClientConfig{URLs: []string{h.URL}, Topics: topics, LastEventID: "0-0", Transport: tr}
	}), 10*time.Second)
	first := r.publishTrimmed(ctx, 50, topics[0])
	if _, err := stayed.WaitCaughtUp(map[string]hub.ID{topics[0]: first[len(first)-1]}, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	away := first[len(first)-1] // where the returning clients left
	rest := r.publishTrimmed(ctx, scale(1000, 20000), topics[0])
	acked := map[string][]hub.ID{topics[0]: append(first, rest...)}
	stored := r.truth(topics[0])
	if len(stored) >= len(acked[topics[0]])-len(first) {
		t.Fatalf("the stream kept %d events: it was not trimmed past the returning clients' position", len(stored))
	}
	back := NewFleet(5, func(int) ClientConfig {
		return ClientConfig{URLs: []string{h.URL}, Topics: topics, LastEventID: away.String(), Transport: tr}
	})
	returned := time.Now()
	back.Run(ctx)
	defer back.Stop()
	recovery, err := back.WaitCaughtUp(newestOf(acked), 10*time.Second)
	if err != nil {
		t.Errorf("returning clients: %v", err)
	}
	recovery = min(recovery, time.Since(returned))
	if _, err := stayed.WaitCaughtUp(newestOf(acked), 10*time.Second); err != nil {
		t.Errorf("connected clients: %v", err)
	}
	tallyStayed := verify(t, stayed, acked)
	tallyBack, bad := back.Check(acked, away)
	if !tallyBack.Clean() {
		t.Errorf("returning clients: %v %v", tallyBack, bad)
	}
	for i, c := range back.Clients {
		got := c.Received(topics[0])
		if len(got) < 2 || !got[0].Reset || got[0].Reason != hub.ResetTruncated || got[0].ID != stored[0] || got[1].ID != stored[0] {
			t.Errorf("returning client %d starts with %+v; want a history-truncated reset naming the oldest stored %v, then that event", i, got[:min(2, len(got))], stored[0])
		}
	}
	if tallyStayed.Resets != 0 || tallyBack.Resets != len(back.Clients) {
		t.Errorf("resets: %d for the connected clients (want 0), %d for the returning ones (want one each)", tallyStayed.Resets, tallyBack.Resets)
	}
	all := tallyStayed.Add(tallyBack)
	record(t, Row{Scenario: "07 history trimmed below a client", Published: len(acked[topics[0]]), Reconnects: stayed.Reconnects() + back.Reconnects(), Recovery: recovery,
		Note: fmt.Sprintf("max_len 100, %d kept; 5 connected clients, 5 returning: reset then the %d stored events in order; %d events excused by the reset",
			len(stored), len(stored), tallyBack.Excused)}.Fill(all))
}

// publishTrimmed publishes n events to topic with a history of 100 and returns their ids, in order.
func (r *scenario) publishTrimmed(ctx context.Context, n int, topic string) []hub.ID {
	r.t.Helper()
	pub := r.publisher(100)
	ids := make([]hub.ID, 0, n)
	for i := range n {
		id, err := pub.Publish(ctx, topic, "progress", fmt.Appendf(nil, `{"workflow":"wf-1","seq":%d}`, i))
		if err != nil {
			r.t.Fatalf("publish: %v", err)
		}
		parsed, _ := hub.ParseID(id)
		ids = append(ids, parsed)
	}
	return ids
}
