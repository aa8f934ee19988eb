package chaos

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/syncverse/hub/internal/rig"
)

// Scenario 4: two replicas; every client is on A when A is SIGKILLed. The clients reconnect to B with their
// Last-Event-ID and miss nothing.
func TestChaos04ReplicaKilled(t *testing.T) {
	r := newRig(t, rig.RedisOptions{})
	a, b := r.startHub(r.redis.Addr), r.startHub(r.redis.Addr)
	topics := topicNames("s4", 2)
	ctx, fleet := connectedAcross(t, a, b, topics)
	n := len(fleet.Clients)
	_, recovery := r.faultUnderLoad(ctx, fleet, scale(1200, 6000), topics, 300, 1500*time.Millisecond, 0, a.Kill, func() {})
	truth, tally := r.delivered(fleet, topics, "B had every event in the stream")
	for i, c := range fleet.Clients {
		if st := c.Stats(); st.Connects != 2 || !st.Connected {
			t.Errorf("client %d: %d streams, connected %v; want 2 (A, then B), still connected", i, st.Connects, st.Connected)
			break
		}
	}
	if v := metric(t, b, "hub_sse_connections_active"); int(v) != n {
		t.Errorf("B's hub_sse_connections_active = %v, want %d", v, n)
	}
	record(t, Row{Scenario: "04 replica A SIGKILL → B", Published: total(truth), Reconnects: fleet.Reconnects(), Recovery: recovery,
		Note: fmt.Sprintf("%d clients, all resumed on B with Last-Event-ID", n)}.Fill(tally))
}

// Scenario 5: a rolling restart. SIGTERM ends A's streams with a fresh jittered retry: hint, A exits within its
// shutdown timeout, the clients come back to B spread over the retry window; then A returns and B is rolled.
func TestChaos05RollingRestart(t *testing.T) {
	r := newRig(t, rig.RedisOptions{})
	env := []string{"HUB_SSE_RETRY=1s"} // the spread is the jitter of this hint, ±50%
	a, b := r.startHub(r.redis.Addr, env...), r.startHub(r.redis.Addr, env...)
	topics := topicNames("s5", 2)
	ctx, fleet := connectedAcross(t, a, b, topics)
	n := len(fleet.Clients)
	done := make(chan *load, 1)
	go func() { done <- r.publish(ctx, 2, scale(2000, 8000), topics, 250) }()
	time.Sleep(time.Second)

	roll := func(name string, h *rig.Hub) (exit, spread, last time.Duration) {
		start := time.Now()
		exit, err := h.Term(10 * time.Second)
		if err != nil {
			t.Errorf("SIGTERM %s: %v", name, err)
		}
		if exit > 3*time.Second+500*time.Millisecond {
			t.Errorf("%s exited %v after SIGTERM, want within its shutdown timeout (3s)", name, exit)
		}
		if err := fleet.WaitConnected(10 * time.Second); err != nil {
			t.Errorf("after rolling %s: %v", name, err)
		}
		spread, last = reconnectSpread(fleet, start)
		return exit, spread, last
	}
	exitA, spreadA, lastA := roll("A", a)
	a2, err := rig.StartHub(hubBin, a.Addr, r.hubEnv(r.redis.Addr, env...), 15*time.Second)
	if err != nil {
		t.Fatalf("start A again on %s: %v", a.Addr, err)
	}
	r.own(a2)
	time.Sleep(500 * time.Millisecond)
	exitB, spreadB, lastB := roll("B", b)
	l := <-done
	truth, tally := r.delivered(fleet, topics, "the stream held every event")
	for _, s := range []time.Duration{spreadA, spreadB} {
		if s < 300*time.Millisecond {
			t.Errorf("reconnections spread over %v, want at least 300ms (retry 1s ±50%%)", s)
		}
	}
	_, failed := l.counts()
	record(t, Row{Scenario: "05 rolling restart (SIGTERM A, then B)", Published: total(truth), Reconnects: fleet.Reconnects(), Recovery: max(lastA, lastB),
		Note: fmt.Sprintf("%d clients; exit after SIGTERM A %v, B %v; reconnections spread (p10-p90) A %v, B %v; last reconnect %v, %v after SIGTERM; %d publish errors",
			n, exitA.Round(time.Millisecond), exitB.Round(time.Millisecond), spreadA.Round(time.Millisecond), spreadB.Round(time.Millisecond),
			lastA.Round(time.Millisecond), lastB.Round(time.Millisecond), failed)}.Fill(tally))
}

// reconnectSpread looks at each client's first request after since: the spread (p90 - p10) of those moments, and
// the last one, relative to since.
func reconnectSpread(f *Fleet, since time.Time) (spread, last time.Duration) {
	var at []time.Duration
	for _, c := range f.Clients {
		for _, a := range c.Attempts() {
			if a.After(since) {
				at = append(at, a.Sub(since))
				break
			}
		}
	}
	if len(at) == 0 {
		return 0, 0
	}
	slices.Sort(at)
	return at[len(at)*9/10] - at[len(at)/10], at[len(at)-1]
}

// connectedAcross opens a fleet of clients split over both topics, each client with both hubs to fail over between,
// and waits until every one is connected. The fleet and its context end with the test.
func connectedAcross(t *testing.T, a, b *rig.Hub, topics []string) (context.Context, *Fleet) {
	t.Helper()
	tr, ctx := clientsFor(t, 2*time.Minute)
	return ctx, runConnected(ctx, t, NewFleet(scale(200, 1000), func(i int) ClientConfig {
		ts := topics[i%2 : i%2+1]
		return ClientConfig{URLs: []string{a.URL, b.URL}, Topics: ts, LastEventID: fromStart(ts), Transport: tr}
	}), 15*time.Second)
}
