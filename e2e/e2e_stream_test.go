package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/pubsub"
)

// A quiet stream gets a heartbeat every period; a busy one gets none, because every write resets the timer.
func TestHeartbeatOnlyWhenQuiet(t *testing.T) {
	rs := rig.StartRedis(t)
	// A period of a second, not less: the busy half must see no heartbeat, and under -race on a loaded machine one
	// publish and its delivery can take a few hundred milliseconds.
	const period = time.Second
	h := hubtest.Start(t, rs, "HUB_SSE_HEARTBEAT="+period.String())
	c := rig.OpenStream(t, h.URL, rig.TopicQuery("hb"), "0-0")
	c.Next(2 * time.Second) // retry
	var beats []time.Time
	for len(beats) < 3 {
		f := c.Next(3 * period)
		if f.Comment != "heartbeat" {
			t.Fatalf("quiet stream sent %+v, want only :heartbeat", f)
		}
		beats = append(beats, time.Now())
	}
	// Timed over two periods, between beats as the client reads them: a loaded machine delays one read by a few
	// hundred milliseconds (the retry hint's too, so the first beat is not timed from it).
	if two := beats[2].Sub(beats[0]); two < 2*period*3/4 {
		t.Errorf("three heartbeats within %v, want about %v apart", two, period)
	}

	// Busy for three periods: each event is published 100 ms after the previous one arrived, so the stream is never
	// quiet for anything near a period; a heartbeat that ignored those writes would come three times.
	events, heartbeats := 0, 0
	for busy := time.Now().Add(3 * period); time.Now().Before(busy); events++ {
		id := h.Publish("hb", "progress", hubtest.EventData(events))
		for {
			f := c.Next(3 * period)
			if f.Comment == "heartbeat" {
				heartbeats++
				continue
			}
			if f.ID != id {
				t.Fatalf("busy stream sent %+v, want event %s", f, id)
			}
			break
		}
		time.Sleep(100 * time.Millisecond) // the publishers' pace, not a wait for a condition
	}
	if heartbeats != 0 {
		t.Errorf("busy stream: %d heartbeats among %d events over %v, want none", heartbeats, events, 3*period)
	}
}

// One client that never reads is evicted as slow, while 40 others on the topic receive every event, in order. The
// readers run in this process, beside the hub: with the race detector on, 100 of them reading 8 MB/s each took more
// of the two cores than a loaded CI machine has to give, and fell behind themselves.
func TestSlowClientEvictedOthersUnaffected(t *testing.T) {
	rs := rig.StartRedis(t)
	h := hubtest.Start(t, rs, "HUB_SSE_CLIENT_BUFFER=64", "HUB_SSE_WRITE_TIMEOUT=60s")
	const readers = 40
	clients := make([]*idReader, readers)
	for i := range clients {
		clients[i] = openIDReader(t, h.URL+"/events?topic=slow&last_event_id=0-0")
	}
	stalled := openStalled(t, h.Addr, "/events?topic=slow&last_event_id=0-0")
	defer stalled.Close()
	rig.WaitMetric(t, h.URL, readers+1, 5*time.Second, "hub_sse_connections_active")
	// The stalled client reads one live event before it freezes: a client that stalls while it is still replaying
	// is not evicted but kept to its write timeout (an overflow during a replay reads the stream again).
	ids := []string{h.Publish("slow", "progress", `{"workflow":"wf","seq":-1}`)}
	readUntil(t, stalled, ids[0])

	payload := `{"workflow":"wf","pad":"` + strings.Repeat("x", 16<<10) + `","seq":%d}`
	evicted := false
	for n := 0; n < 3000 && !evicted; n += 10 {
		for i := n; i < n+10; i++ {
			ids = append(ids, h.Publish("slow", "progress", fmt.Sprintf(payload, i)))
		}
		time.Sleep(20 * time.Millisecond) // pace the publisher like a real agent, so only the stalled client falls behind
		v, _ := rig.MetricValue(rig.Scrape(t, h.URL), "hub_sse_connections_closed_total", "reason=slow")
		evicted = v == 1
	}
	if !evicted {
		t.Fatalf("the stalled client was not evicted after %d events of 16 KiB", len(ids))
	}
	t.Logf("the stalled client was evicted after %d events of 16 KiB", len(ids))
	for i, c := range clients {
		if got := c.waitIDs(len(ids), 20*time.Second); strings.Join(got, ",") != strings.Join(ids, ",") {
			t.Fatalf("reader %d got %d ids, want the %d published, in order (first difference at %d)", i, len(got), len(ids), firstDiff(got, ids))
		}
	}
	rig.WaitMetric(t, h.URL, 1, 5*time.Second, "hub_sse_connections_closed_total", "reason=slow")
	if v, _ := rig.MetricValue(rig.Scrape(t, h.URL), "hub_sse_connections_active"); v != readers {
		t.Errorf("hub_sse_connections_active = %v, want %d", v, readers)
	}
}

// idReader records the ids of one stream and nothing else: cheap enough to run a hundred of them beside the hub.
type idReader struct {
	mu     sync.Mutex
	ids    []string
	cancel context.CancelFunc
	done   chan struct{}
}

func openIDReader(t *testing.T, url string) *idReader {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		cancel()
		t.Fatalf("GET %s: %v", url, err)
	}
	r := &idReader{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		defer resp.Body.Close()
		br := bufio.NewReaderSize(resp.Body, 4096)
		for {
			line, err := br.ReadSlice('\n')
			if err == bufio.ErrBufferFull {
				continue // the rest of a long data line
			}
			if err != nil {
				return
			}
			if id, ok := strings.CutPrefix(string(line[:min(len(line), 64)]), "id: "); ok {
				r.mu.Lock()
				r.ids = append(r.ids, strings.TrimSuffix(id, "\n"))
				r.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-r.done })
	return r
}

// waitIDs waits until n ids arrived (or within passed) and returns them.
func (r *idReader) waitIDs(n int, within time.Duration) []string {
	deadline := time.Now().Add(within)
	for {
		r.mu.Lock()
		got := append([]string(nil), r.ids...)
		r.mu.Unlock()
		if len(got) >= n || time.Now().After(deadline) {
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// openStalled sends a GET and never reads the answer, with a tiny receive buffer, like a browser tab that froze.
func openStalled(t *testing.T, addr, path string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.(*net.TCPConn).SetReadBuffer(4096)
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, addr); err != nil {
		t.Fatal(err)
	}
	return conn
}

// readUntil reads conn until want has come by, failing the test after 5 seconds.
func readUntil(t *testing.T, conn net.Conn, want string) {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	defer conn.SetReadDeadline(time.Time{})
	var got []byte
	buf := make([]byte, 4096)
	for !strings.Contains(string(got), want) {
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatalf("waiting for %q on the stream: %v (got %q)", want, err, got)
		}
		got = append(got, buf[:n]...)
	}
}

// A live message that never arrives (stored, but published where nobody listens) is repaired from the stream: by
// the next envelope's prev, and by the tail check when no envelope follows.
func TestGapRepairDeliversLostMessages(t *testing.T) {
	rs := rig.StartRedis(t)
	h := hubtest.Start(t, rs, "HUB_REDIS_TAIL_CHECK=200ms")
	c := rig.OpenStream(t, h.URL, rig.TopicQuery("gap"), "0-0")
	c.Next(2 * time.Second)
	waitLive(t, h, c, "gap") // else the replay, not a repair, could read the lost event, and the counts below differ
	lost := publishElsewhere(t, h, "gap", hubtest.EventData(1))
	next := h.Publish("gap", "progress", hubtest.EventData(2))
	got := c.Events(2, 5*time.Second)
	lastLost := publishElsewhere(t, h, "gap", hubtest.EventData(3))
	got = append(got, c.Events(1, 5*time.Second)...)
	for i, want := range []string{lost, next, lastLost} {
		if got[i].ID != want || got[i].Data != hubtest.EventData(i+1) {
			t.Errorf("event %d = %s %s, want %s %s", i, got[i].ID, got[i].Data, want, hubtest.EventData(i+1))
		}
	}
	// A repair is counted after it broadcast what it read, so the client can have the event before the count moves.
	rig.WaitMetric(t, h.URL, 2, 5*time.Second, "hub_redis_gap_repairs_total")
	if v, _ := rig.MetricValue(rig.Scrape(t, h.URL), "hub_events_received_total", "source=repair"); v != 3 {
		t.Errorf("hub_events_received_total{source=repair} = %v, want 3 (the lost one, the one that revealed it, the lost last one)", v)
	}
}

// waitLive publishes ephemeral probes on topic's live channel until c receives one. The hub then follows the topic
// with its baseline read, and c's subscription is past its replay, so what is published next reaches c live.
func waitLive(t *testing.T, h *hubtest.Hub, c *rig.Stream, topic string) {
	t.Helper()
	const probe = `{"probe":"live"}`
	ch := pubsub.Keys{Prefix: h.Prefix}.Channel(topic)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		// A probe published before the hub's SUBSCRIBE is lost; probes after it arrive in order, so none is left over.
		if err := h.RDB.Publish(context.Background(), ch, probe).Err(); err != nil {
			t.Fatalf("PUBLISH %s: %v", ch, err)
		}
		for next := time.After(100 * time.Millisecond); ; {
			select {
			case f, ok := <-c.Frames():
				if !ok {
					t.Fatalf("stream ended while waiting for it to be live")
				}
				if f.Event != "" && !f.HasID && f.Data == probe {
					return
				}
				continue
			case <-next:
			}
			break
		}
	}
	t.Fatalf("stream not live within 10s: no ephemeral probe came through")
}

// publishElsewhere runs the publish script with a channel nobody subscribes to: the event is stored with the right
// prev, but its live message is lost.
func publishElsewhere(t *testing.T, h *hubtest.Hub, topic, data string) string {
	t.Helper()
	k := pubsub.Keys{Prefix: h.Prefix}
	id, err := h.RDB.Eval(context.Background(), pubsub.PublishScript, []string{k.Stream(topic), k.State(topic)},
		"nowhere", "progress", data, 10000, 65536, "").Text()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// Killing the hub's pub/sub connection loses the live messages published meanwhile; the resubscription repairs them.
func TestResubscriptionRepairsAfterPubSubKill(t *testing.T) {
	rs := rig.StartRedisWith(t, rig.RedisOptions{}) // CLIENT KILL needs a real redis-server
	h := hubtest.Start(t, rs)
	c := rig.OpenStream(t, h.URL, rig.TopicQuery("kill"), "0-0")
	var ids []string
	for i := 0; i < 300; i++ {
		ids = append(ids, h.Publish("kill", "progress", hubtest.EventData(i)))
		if i%50 == 25 {
			if err := h.RDB.ClientKillByFilter(context.Background(), "TYPE", "pubsub").Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	got := c.Events(len(ids), 10*time.Second)
	for i, f := range got {
		if f.ID != ids[i] {
			t.Fatalf("event %d = %s, want %s", i, f.ID, ids[i])
		}
	}
	if v := rig.WaitMetric(t, h.URL, 1, 5*time.Second, "hub_redis_resubscriptions_total"); v < 1 {
		t.Errorf("hub_redis_resubscriptions_total = %v", v)
	}
}

// While Redis is down, open streams stay open with heartbeats, /readyz says 503, publishing fails clearly; after
// Redis comes back, events flow again.
func TestRedisOutage(t *testing.T) {
	rs := rig.StartRedisWith(t, rig.RedisOptions{AppendOnly: true})
	h := hubtest.Start(t, rs, "HUB_SSE_HEARTBEAT=200ms")
	c := rig.OpenStream(t, h.URL, rig.TopicQuery("out"), "0-0")
	c.Next(2 * time.Second)
	before := h.Publish("out", "progress", hubtest.EventData(1))
	if f := c.NextEvent(5 * time.Second); f.ID != before {
		t.Fatalf("before the outage got %s, want %s", f.ID, before)
	}
	rs.Kill()
	waitStatus(t, h.URL+"/readyz", http.StatusServiceUnavailable, 5*time.Second)
	for range 3 {
		if f := c.Next(2 * time.Second); f.Comment != "heartbeat" {
			t.Fatalf("during the outage the stream sent %+v, want heartbeats", f)
		}
	}
	resp, err := http.Post(h.URL+"/publish", "application/json", strings.NewReader(`{"topic":"out","data":1}`))
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(resp)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "redis unavailable") {
		t.Errorf("POST /publish during the outage = %d %s, want 503 redis unavailable", resp.StatusCode, body)
	}
	if err := rs.Start(); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, h.URL+"/readyz", http.StatusOK, 10*time.Second)
	after := h.Publish("out", "progress", hubtest.EventData(2))
	if f := c.NextEvent(5 * time.Second); f.ID != after {
		t.Errorf("after the outage got %s, want %s", f.ID, after)
	}
}

func waitStatus(t *testing.T, url string, want int, within time.Duration) {
	t.Helper()
	got, body := 0, ""
	rig.Eventually(t, within, fmt.Sprintf("GET %s = %d", url, want), func() bool {
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		got, body = resp.StatusCode, readAll(resp)
		return got == want
	})
	if want != http.StatusOK && !strings.Contains(body, `"error"`) {
		t.Errorf("GET %s = %d %s, want a JSON error", url, got, body)
	}
}

func readAll(resp *http.Response) string {
	defer resp.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		b.WriteString(sc.Text())
	}
	return b.String()
}

// On cancel, run ends every stream and returns nil within the shutdown timeout; goleak (TestMain) checks that
// nothing it started is left.
func TestShutdownEndsStreams(t *testing.T) {
	rs := rig.StartRedis(t)
	h := hubtest.Start(t, rs, "HUB_SHUTDOWN_TIMEOUT=3s")
	clients := make([]*rig.Stream, 50)
	for i := range clients {
		clients[i] = rig.OpenStream(t, h.URL, rig.TopicQuery(fmt.Sprintf("sd%d", i%5)), "0-0")
	}
	rig.WaitMetric(t, h.URL, 50, 5*time.Second, "hub_sse_connections_active")
	start := time.Now()
	if err := h.Stop(); err != nil {
		t.Fatalf("run() = %v, want nil", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("run() returned %v after cancel, want within the 3s shutdown timeout", took)
	}
	for i, c := range clients {
		if !c.WaitEnd(time.Second) {
			t.Errorf("client %d: stream still open after shutdown", i)
		}
	}
}
