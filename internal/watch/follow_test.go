package watch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a Sink that keeps what it is told.
type recorder struct {
	events, controls []Event
	snapshots        []string
	states           []string
	onEvent          func(Event)
}

func (r *recorder) Snapshot(topic string, evs []Event, _ bool) {
	r.snapshots = append(r.snapshots, fmt.Sprintf("%s:%d", topic, len(evs)))
}
func (r *recorder) Event(ev Event) {
	r.events = append(r.events, ev)
	if r.onEvent != nil {
		r.onEvent(ev)
	}
}
func (r *recorder) Control(ev Event)           { r.controls = append(r.controls, ev) }
func (r *recorder) State(state, detail string) { r.states = append(r.states, state) }
func (r *recorder) Tick(time.Time)             {}

func (r *recorder) ids() string {
	var ids []string
	for _, e := range r.events {
		ids = append(ids, e.Topic+"/"+e.ID)
	}
	return strings.Join(ids, " ")
}

// scriptedHub answers snapshots with the next of its cursors and each /events connection with the next script
// (frames as text); a connection past the last script stays open until the client leaves.
type scriptedHub struct {
	mu        sync.Mutex
	cursors   []string
	scripts   []string
	lastIDs   []string // the Last-Event-ID of every connection
	queries   []string
	auths     []string
	snapshots int
	status    int // answer /events with this status when set
}

func (h *scriptedHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.auths = append(h.auths, r.Header.Get("Authorization"))
	if strings.HasSuffix(r.URL.Path, "/snapshot") {
		cur := h.cursors[min(h.snapshots, len(h.cursors)-1)]
		h.snapshots++
		h.mu.Unlock()
		fmt.Fprintf(w, `{"topic":"t","cursor":%q,"workflows":{"w":{"id":%q,"type":"progress","data":{"workflow":"w"}}},"locks":{},"health":{}}`, cur, cur)
		return
	}
	if h.status != 0 {
		h.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(h.status)
		fmt.Fprint(w, `{"error":"no token"}`)
		return
	}
	n := len(h.lastIDs)
	h.lastIDs = append(h.lastIDs, r.Header.Get("Last-Event-ID"))
	h.queries = append(h.queries, r.URL.RawQuery)
	script := ""
	if n < len(h.scripts) {
		script = h.scripts[n]
	}
	h.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, "retry: 20\n\n"+script)
	w.(http.Flusher).Flush()
	if n >= len(h.scripts)-1 && n >= len(h.scripts) {
		<-r.Context().Done()
	}
}

func (h *scriptedHub) seen() (lastIDs, queries []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.lastIDs...), append([]string(nil), h.queries...)
}

// progressFrames is the SSE text of one progress event (data {}) for each id, in order.
func progressFrames(ids ...string) string {
	var b strings.Builder
	for _, id := range ids {
		b.WriteString("id: " + id + "\nevent: progress\ndata: {}\n\n")
	}
	return b.String()
}

// serve runs h for the test; the server closes when the test ends.
func serve(t *testing.T, h *scriptedHub) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// wantEvents fails the test unless rec saw the events want (topic/id, in order); why says what want stands for.
func wantEvents(t *testing.T, rec *recorder, want, why string) {
	t.Helper()
	if got := rec.ids(); got != want {
		t.Errorf("events = %s, want %s (%s)", got, want, why)
	}
}

// follow runs a Follower of topics on srv until the sink has n events (then cancels) or 10s pass.
func follow(t *testing.T, srv *httptest.Server, f *Follower, n int) (*recorder, error) {
	t.Helper()
	c, err := NewClient(srv.URL, f.Client.Token)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rec := &recorder{}
	rec.onEvent = func(Event) {
		if len(rec.events) >= n {
			cancel()
		}
	}
	f.Client, f.Sink = c, rec
	err = f.Follow(ctx)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("Follow did not see %d events within 10s; got %s", n, rec.ids())
	}
	return rec, err
}

func newFollower(topics ...string) *Follower {
	return &Follower{Client: &Client{Token: func() (string, error) { return "", nil }}, Topics: topics}
}

func TestFollowResumesWithLastEventID(t *testing.T) {
	h := &scriptedHub{cursors: []string{"5-0"}, scripts: []string{
		progressFrames("6-0", "7-0"), // then the stream ends
		progressFrames("7-0") + ":heartbeat\n\n" + progressFrames("8-0"),
	}}
	srv := serve(t, h)
	rec, err := follow(t, srv, newFollower("t"), 3)
	if err != nil {
		t.Fatalf("Follow = %v, want nil after cancel", err)
	}
	wantEvents(t, rec, "t/6-0 t/7-0 t/8-0", "the repeated 7-0 dropped")
	lastIDs, _ := h.seen()
	if len(lastIDs) < 2 || lastIDs[0] != "5-0" || lastIDs[1] != "7-0" {
		t.Errorf("Last-Event-ID per connection = %q, want 5-0 (the snapshot's cursor) then 7-0", lastIDs)
	}
	if strings.Join(rec.states, ",") != "connecting,live,reconnecting,live" {
		t.Errorf("states = %v", rec.states)
	}
}

func TestFollowMultiTopicCursor(t *testing.T) {
	h := &scriptedHub{cursors: []string{"1-0"}, scripts: []string{
		progressFrames("b=3-0;a=1-0", "a=4-0;b=3-0"),
		progressFrames("b=5-0;a=4-0"),
	}}
	srv := serve(t, h)
	rec, _ := follow(t, srv, newFollower("a", "b"), 3)
	wantEvents(t, rec, "b/3-0 a/4-0 b/5-0", "each on its own topic's cursor")
	lastIDs, _ := h.seen()
	if lastIDs[0] != "a=1-0;b=1-0" || lastIDs[1] != "a=4-0;b=3-0" {
		t.Errorf("Last-Event-ID per connection = %q, want a=1-0;b=1-0 then a=4-0;b=3-0", lastIDs)
	}
}

func TestFollowResetReloadsTheSnapshot(t *testing.T) {
	script := "event: reset\ndata: {\"topic\":\"t\",\"reason\":\"history-truncated\",\"oldest\":\"8-0\"}\n\n" +
		progressFrames("8-0", "9-0", "11-0")
	for _, tt := range []struct {
		toSnapshot bool
		want       string
		n          int
	}{
		{true, "t/11-0", 1},              // 8-0 and 9-0 are inside the reloaded snapshot (cursor 10-0)
		{false, "t/8-0 t/9-0 t/11-0", 3}, // the line modes pass on what follows the reset
	} {
		h := &scriptedHub{cursors: []string{"2-0", "10-0"}, scripts: []string{script}}
		f := newFollower("t")
		f.ResetToSnapshot = tt.toSnapshot
		rec, _ := follow(t, serve(t, h), f, tt.n)
		wantEvents(t, rec, tt.want, fmt.Sprintf("ResetToSnapshot %v", tt.toSnapshot))
		if len(rec.controls) != 1 || rec.controls[0].Type != "reset" || !strings.Contains(string(rec.controls[0].Data), "history-truncated") {
			t.Errorf("controls = %+v, want the reset", rec.controls)
		}
		if strings.Join(rec.snapshots, ",") != "t:1,t:1" {
			t.Errorf("snapshots = %v, want two of t (at the start and after the reset)", rec.snapshots)
		}
	}
}

func TestFollowHistoryOnTheFirstConnectionOnly(t *testing.T) {
	h := &scriptedHub{cursors: []string{"9-0"}, scripts: []string{
		progressFrames("3-0", "9-0"),
		progressFrames("10-0"),
	}}
	srv := serve(t, h)
	f := newFollower("t")
	f.History = 2
	rec, _ := follow(t, srv, f, 3)
	wantEvents(t, rec, "t/3-0 t/9-0 t/10-0", "the two replayed, older than the snapshot, then 10-0")
	lastIDs, queries := h.seen()
	if lastIDs[0] != "" || !strings.Contains(queries[0], "history=2") || lastIDs[1] != "9-0" || strings.Contains(queries[1], "history") {
		t.Errorf("connections: Last-Event-ID %q, queries %q; want history=2 without a position, then 9-0 without history", lastIDs, queries)
	}
}

func TestFollowAuthExpiredReadsTheTokenAgain(t *testing.T) {
	h := &scriptedHub{cursors: []string{"1-0"}, scripts: []string{
		"event: auth-expired\ndata: {}\n\n",
		progressFrames("2-0"),
	}}
	srv := serve(t, h)
	var mu sync.Mutex
	n := 0
	f := newFollower("t")
	f.Client.Token = func() (string, error) {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf("tok%d", n), nil
	}
	rec, _ := follow(t, srv, f, 1)
	if len(rec.controls) != 1 || rec.controls[0].Type != "auth-expired" {
		t.Errorf("controls = %+v, want auth-expired", rec.controls)
	}
	h.mu.Lock()
	auths := h.auths
	h.mu.Unlock()
	if len(auths) != 3 || auths[0] != "Bearer tok1" || auths[2] != "Bearer tok3" {
		t.Errorf("Authorization per request (snapshot, stream, stream) = %q, want a token read for each", auths)
	}
}

func TestFollowStopsOnARefusal(t *testing.T) {
	h := &scriptedHub{cursors: []string{"1-0"}, status: http.StatusUnauthorized}
	srv := serve(t, h)
	c, _ := NewClient(srv.URL, nil)
	defer c.Close()
	f := &Follower{Client: c, Topics: []string{"t"}, Sink: &recorder{}}
	start := time.Now()
	err := f.Follow(context.Background())
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 401 || se.Msg != "no token" || time.Since(start) > 5*time.Second {
		t.Fatalf("Follow against a 401 = %v after %v, want the 401 with the hub's message at once", err, time.Since(start))
	}
}

func TestBackoff(t *testing.T) {
	f := &Follower{retry: time.Second}
	for attempt, max := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		for range 50 {
			if d := f.backoff(attempt+1, nil); d < max/2 || d > max {
				t.Fatalf("backoff(%d) = %v, want within [%v, %v]", attempt+1, d, max/2, max)
			}
		}
	}
	if d := f.backoff(20, nil); d > 30*time.Second {
		t.Errorf("backoff(20) = %v, want at most 30s", d)
	}
	if d := f.backoff(1, &StatusError{Code: 503, RetryAfter: 10 * time.Second}); d < 5*time.Second {
		t.Errorf("backoff with Retry-After 10s = %v, want at least 5s", d)
	}
}
