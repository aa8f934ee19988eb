package chaos

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/syncverse/hub/internal/rig"
)

// Scenario 8: 2,000 clients that missed the same 200 events reconnect at once with the same Last-Event-ID. All
// recover exactly, the hub's memory stays bounded, and the XRANGE calls Redis serves are counted: concurrent
// identical replays share one read (pubsub's read coalescing), so the count stays far below one per client.
func TestChaos08ReconnectStorm(t *testing.T) {
	r, h := newRigWithHub(t)
	topics := []string{"s8"}
	tr, ctx := clientsFor(t, 3*time.Minute)
	n := scale(2000, 5000)
	r.publish(ctx, 1, 100, topics, 5000)
	left := r.newest(topics)[topics[0]] // where every client left
	r.publish(ctx, 1, 200, topics, 5000)
	truth := r.truths(topics)

	baseRSS := metric(t, h, "process_resident_memory_bytes")
	xrangeBefore := xrangeCalls(t, r)
	fleet := NewFleet(n, func(int) ClientConfig {
		return ClientConfig{URLs: []string{h.URL}, Topics: topics, LastEventID: left.String(), Transport: tr}
	})
	peak := watchRSS(h)
	start := time.Now()
	fleet.Run(ctx) // all at once
	defer fleet.Stop()
	recovery, err := fleet.WaitCaughtUp(newestOf(truth), 90*time.Second)
	if err != nil {
		t.Errorf("storm: %v", err)
	}
	recovery = min(recovery, time.Since(start))
	peakRSS := peak()
	xranges := xrangeCalls(t, r) - xrangeBefore
	tally, bad := fleet.Check(truth, left)
	if !tally.Clean() || tally.Resets != 0 {
		t.Errorf("storm: %v %v", tally, bad)
	}
	if peakRSS > baseRSS+512<<20 {
		t.Errorf("hub resident memory %s at baseline, %s at the peak of the storm; want less than 512 MiB more", mib(baseRSS), mib(peakRSS))
	}
	if xranges > n {
		t.Errorf("%d XRANGE calls for %d identical replays: more than one per client", xranges, n)
	}
	record(t, Row{Scenario: "08 reconnect storm", Published: total(truth), Reconnects: fleet.Reconnects(), Recovery: recovery,
		Note: fmt.Sprintf("%d clients × 200 missed events; XRANGE calls %d (%.2f per client); hub RSS %s → peak %s",
			n, xranges, float64(xranges)/float64(n), mib(baseRSS), mib(peakRSS))}.Fill(tally))
}

var cmdstatXrange = regexp.MustCompile(`cmdstat_xrange:calls=(\d+)`)

// xrangeCalls reads how many XRANGE commands Redis has served (INFO commandstats).
func xrangeCalls(t *testing.T, r *scenario) int {
	t.Helper()
	info, err := r.rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatalf("INFO commandstats: %v", err)
	}
	m := cmdstatXrange.FindStringSubmatch(info)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// watchRSS samples the hub's resident memory every 100ms until the returned function is called, which gives the
// highest sample.
func watchRSS(h *rig.Hub) func() float64 {
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var peak float64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if m, err := h.Metrics(ctx); err == nil {
				mu.Lock()
				peak = max(peak, m["process_resident_memory_bytes"])
				mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return func() float64 {
		cancel()
		<-done
		return peak
	}
}

func mib(b float64) string { return fmt.Sprintf("%.0f MiB", b/(1<<20)) }

// Scenario 9: 10,000 connect/disconnect cycles, some cut in the middle of a replay. Afterwards the hub's goroutines
// and heap are back at their baseline: nothing is left behind per connection.
func TestChaos09Churn(t *testing.T) {
	r, h := newRigWithHub(t)
	topics := []string{"s9"}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r.publish(ctx, 1, 300, topics, 5000)
	truth := r.truth(topics[0])
	tr := &http.Transport{DisableKeepAlives: true, DisableCompression: true} // every cycle a new connection
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr, Timeout: 10 * time.Second}

	cycle := func(i int) error {
		cursor := truth[len(truth)-1-i%50] // resume up to 50 events back: a short replay, then live
		cctx, stop := context.WithCancel(ctx)
		defer stop()
		req, _ := http.NewRequestWithContext(cctx, http.MethodGet, h.URL+"/events?topic="+topics[0], nil)
		req.Header.Set("Last-Event-ID", cursor.String())
		resp, err := cl.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET /events: %s", resp.Status)
		}
		buf := make([]byte, 512)
		_, err = resp.Body.Read(buf) // the retry hint at least; then leave, often mid-replay
		return err
	}
	warm := func(k int) {
		for i := range k {
			_ = cycle(i)
		}
	}
	warm(200)
	settle(t, h, 0, 0)
	baseG := metric(t, h, "go_goroutines")
	baseHeap := metric(t, h, "go_memstats_heap_inuse_bytes")
	baseRSS := metric(t, h, "process_resident_memory_bytes")

	cycles, workers := scale(10000, 100000), 50
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	failures := 0
	for w := range workers {
		wg.Go(func() {
			for i := w; i < cycles && ctx.Err() == nil; i += workers {
				if err := cycle(i); err != nil {
					mu.Lock()
					failures++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	if failures > 0 {
		t.Errorf("%d of %d cycles failed", failures, cycles)
	}
	g, heap := settle(t, h, baseG+5, 2*baseHeap+32<<20)
	rss := metric(t, h, "process_resident_memory_bytes")
	record(t, Row{Scenario: "09 churn", Published: len(truth),
		Note: fmt.Sprintf("%d connect/disconnect cycles in %v; goroutines %.0f → %.0f; heap in use %s → %s; RSS %s → %s",
			cycles, took.Round(100*time.Millisecond), baseG, g, mib(baseHeap), mib(heap), mib(baseRSS), mib(rss))})
}

// settle waits until the hub has no open stream and, when bounds are given, at most maxG goroutines and maxHeap
// bytes of heap in use; it returns the last figures.
func settle(t *testing.T, h *rig.Hub, maxG, maxHeap float64) (g, heap float64) {
	t.Helper()
	err := poll(15*time.Second, func() (bool, string) {
		active := metric(t, h, "hub_sse_connections_active")
		g, heap = metric(t, h, "go_goroutines"), metric(t, h, "go_memstats_heap_inuse_bytes")
		ok := active == 0 && (maxG == 0 || g <= maxG) && (maxHeap == 0 || heap <= maxHeap)
		return ok, fmt.Sprintf("%v streams open, %v goroutines (want ≤ %v), heap in use %s (want ≤ %s)", active, g, maxG, mib(heap), mib(maxHeap))
	})
	if err != nil {
		t.Errorf("after churn: %v", err)
	}
	return g, heap
}
