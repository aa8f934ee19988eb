package sse

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/rig"
)

const wait = 5 * time.Second

func TestEventsRejectsBadRequests(t *testing.T) {
	overTransports(t, func(t *testing.T, tr transport) {
		e := newEnvOver(t, tr, hub.Config{}, Config{MaxTopics: 2, MaxCursorBytes: 64})
		cases := []struct {
			name, method, query, lastEventID string
			status                           int
			errHas                           string
		}{
			{"POST", http.MethodPost, "topic=a", "", 405, "GET"},
			{"no topic", "GET", "", "", 400, "missing topic"},
			{"empty topic", "GET", "topic=", "", 400, "invalid topic"},
			{"space", "GET", "topic=" + url.QueryEscape("a b"), "", 400, "invalid topic"},
			{"brace", "GET", "topic=" + url.QueryEscape("{a}"), "", 400, "invalid topic"},
			{"star", "GET", "topic=a*", "", 400, "invalid topic"},
			{"CRLF", "GET", "topic=" + url.QueryEscape("a\r\nb"), "", 400, "invalid topic"},
			{"too long", "GET", "topic=" + strings.Repeat("a", 129), "", 400, "invalid topic"},
			{"too many topics", "GET", "topic=a&topic=b&topic=c", "", 400, "too many topics"},
			{"bad cursor header", "GET", "topic=a", "yesterday", 400, "Last-Event-ID"},
			{"bad cursor query", "GET", "topic=a&last_event_id=1-x", "", 400, "Last-Event-ID"},
			{"bad presence", "GET", "topic=a&presence=yes", "", 400, "presence must be 1 or 0"},
			{"bare id for two topics", "GET", "topic=a&topic=b", "1-0", 400, "Last-Event-ID"},
			{"cursor too long", "GET", "topic=a", "a=" + strings.Repeat("1", 70) + "-0", 400, "longer than 64"},
			{"cursor names a bad topic", "GET", "topic=a", "a*=1-0", 400, "Last-Event-ID"},
			{"history not a number", "GET", "topic=a&history=ten", "", 400, "history"},
			{"history negative", "GET", "topic=a&history=-1", "", 400, "history"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				req, _ := http.NewRequest(c.method, e.srv.URL+"/events?"+c.query, nil)
				if c.lastEventID != "" {
					req.Header.Set("Last-Event-ID", c.lastEventID)
				}
				resp, err := e.client.Do(req)
				if err != nil {
					t.Fatalf("%s /events?%s: %v", c.method, c.query, err)
				}
				defer resp.Body.Close()
				var body map[string]string
				raw, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != c.status {
					t.Fatalf("%s /events?%s (Last-Event-ID %q) = %d %s, want %d", c.method, c.query, c.lastEventID, resp.StatusCode, raw, c.status)
				}
				if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
					t.Errorf("Content-Type = %q, want application/json", ct)
				}
				if err := json.Unmarshal(raw, &body); err != nil || !strings.Contains(body["error"], c.errHas) {
					t.Errorf("%s /events?%s body = %s, want {\"error\": ...%s...}", c.method, c.query, raw, c.errHas)
				}
			})
		}
		if e.hub.Topics() != 0 {
			t.Errorf("rejected requests left %d topics subscribed, want 0", e.hub.Topics())
		}
	})
}

func TestEventsHeadersAndRetryHintFirst(t *testing.T) {
	overTransports(t, func(t *testing.T, tr transport) {
		e := newEnvOver(t, tr, hub.Config{}, Config{Retry: time.Second})
		seen := map[time.Duration]bool{}
		for range 8 {
			req, _ := http.NewRequest("GET", e.srv.URL+"/events?topic=a", nil)
			req.Header.Set("Accept-Encoding", "gzip")
			resp, err := e.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			for k, want := range map[string]string{"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no", "Content-Encoding": ""} {
				if got := resp.Header.Get(k); got != want {
					t.Errorf("GET /events: header %s = %q, want %q", k, got, want)
				}
			}
			s := rig.ReadStream(t, resp)
			f := s.Next(wait) // the hint is flushed at once, before anything else happens
			d := retryMillis(t, f)
			if d < 500*time.Millisecond || d >= 1500*time.Millisecond {
				t.Errorf("first frame retry: %v, want in [500ms, 1500ms) for Retry=1s", d)
			}
			seen[d] = true
			s.Close()
		}
		if len(seen) < 2 {
			t.Errorf("8 connections all got retry %v: no jitter", seen)
		}
	})
}

func TestEventsReplayThenLive(t *testing.T) {
	overTransports(t, func(t *testing.T, tr transport) {
		e := newEnvOver(t, tr, hub.Config{}, Config{})
		e.store.Add("a", 5)
		// The header wins over the query: EventSource resends the first URL on reconnect.
		s := e.open(t, "topic=a&last_event_id=4-0", "2-0")
		var got []string
		for range 3 {
			got = append(got, s.NextEvent(wait).ID)
		}
		for _, ev := range e.store.Add("a", 2) {
			e.hub.Broadcast(ev)
		}
		for range 2 {
			f := s.NextEvent(wait)
			got = append(got, f.ID)
			if f.Event != "progress" || strings.Contains(f.Data, "\n") || !strings.Contains(f.Data, `"n":`+strings.TrimSuffix(f.ID, "-0")) {
				t.Errorf("live frame %v, want event progress and its data", f)
			}
		}
		if want := []string{"3-0", "4-0", "5-0", "6-0", "7-0"}; !slices.Equal(got, want) {
			t.Errorf("Last-Event-ID 2-0 (query says 4-0), then 2 live events: ids %q, want %q", got, want)
		}
	})
}

func TestEventsQueryCursorAndHistory(t *testing.T) {
	overTransports(t, func(t *testing.T, tr transport) {
		e := newEnvOver(t, tr, hub.Config{}, Config{MaxHistory: 3})
		e.store.Add("a", 10)
		s := e.open(t, "topic=a&last_event_id=8-0", "")
		for _, want := range []string{"9-0", "10-0"} {
			if f := s.NextEvent(wait); f.ID != want {
				t.Errorf("last_event_id=8-0: frame %v, want id %s", f, want)
			}
		}
		h := e.open(t, "topic=a&history=50", "") // capped at MaxHistory
		for _, want := range []string{"8-0", "9-0", "10-0"} {
			if f := h.NextEvent(wait); f.ID != want {
				t.Errorf("history=50 with MaxHistory 3: frame %v, want id %s", f, want)
			}
		}
		e.hub.Broadcast(e.store.Add("a", 1)[0])
		for _, st := range []*rig.Stream{s, h} {
			if f := st.NextEvent(wait); f.ID != "11-0" {
				t.Errorf("after replay, live frame %v, want id 11-0", f)
			}
		}
	})
}

func TestEventsEphemeralAndReset(t *testing.T) {
	overTransports(t, func(t *testing.T, tr transport) {
		e := newEnvOver(t, tr, hub.Config{}, Config{})
		s := e.open(t, "topic=a", "")
		if f := s.Next(wait); f.Retry == "" {
			t.Fatalf("first frame %v, want the retry hint", f)
		}
		e.hub.Broadcast(&hub.Event{Topic: "a", Type: "progress", Data: []byte("{\"x\":\n1}"), Source: hub.SourceEphemeral})
		e.hub.Broadcast(hub.NewReset("a", hub.ResetLost, hub.ID{}))
		f := s.NextEvent(wait)
		if f.HasID || f.Event != "progress" || f.Data != "{\"x\":\n1}" {
			t.Errorf("ephemeral frame %v, want no id, event progress, data split at the line break", f)
		}
		f = s.NextEvent(wait)
		if f.HasID || f.Event != "reset" || !strings.Contains(f.Data, `"reason":"history-lost"`) {
			t.Errorf("reset frame %v, want no id, event reset with its reason", f)
		}
	})
}

func TestEventsHeartbeatWhenQuiet(t *testing.T) {
	overTransports(t, func(t *testing.T, tr transport) {
		e := newEnvOver(t, tr, hub.Config{}, Config{Heartbeat: 50 * time.Millisecond})
		start := time.Now()
		s := e.open(t, "topic=a", "")
		s.Next(wait) // retry
		if f := s.Next(wait); f.Comment != "heartbeat" {
			t.Fatalf("quiet stream: frame %v, want :heartbeat", f)
		}
		// A heartbeat may come up to one wheel tick early (beatEvery), so that no stream is silent longer than 50ms.
		if d, least := time.Since(start), 50*time.Millisecond-beatEvery(50*time.Millisecond); d < least {
			t.Errorf("heartbeat after %v of quiet, want at least %v", d, least)
		}
		if f := s.Next(wait); f.Comment != "heartbeat" {
			t.Fatalf("still quiet: frame %v, want a second :heartbeat", f)
		}
	})
}

func TestEventsNoHeartbeatWhileEventsFlow(t *testing.T) {
	overTransports(t, func(t *testing.T, tr transport) {
		// A period of a second: one broadcast and its delivery must never take that long, which a loaded machine
		// under -race does not guarantee for 300 ms.
		hb := time.Second
		e := newEnvOver(t, tr, hub.Config{}, Config{Heartbeat: hb})
		// From the start of the stream: a fresh stream begins at the newest event when its subscription goes live, so an
		// event broadcast before that would be skipped and the test would wait for it into a heartbeat.
		s := e.open(t, "topic=a", "0-0")
		s.Next(wait) // retry
		for end := time.Now().Add(3 * hb); time.Now().Before(end); {
			e.hub.Broadcast(e.store.Add("a", 1)[0])
			f := s.Next(wait) // each event is written before the next one is published
			if f.Comment != "" {
				t.Fatalf("heartbeat %v while an event was written every few ms (heartbeat %v)", f, hb)
			}
			time.Sleep(5 * time.Millisecond) // pace the publisher
		}
	})
}

func TestEventsEndOnHubClose(t *testing.T) {
	overTransports(t, func(t *testing.T, tr transport) {
		e := newEnvOver(t, tr, hub.Config{}, Config{Retry: 2 * time.Second})
		e.store.Hold("held") // its stream is still in its replay, waiting for the live feed, when the hub closes
		streams := []*rig.Stream{e.open(t, "topic=a", ""), e.open(t, "topic=a&topic=b", ""), e.open(t, "topic=held", "")}
		for _, s := range streams {
			s.Next(wait) // retry hint: the stream is open
		}
		e.hub.Close()
		for i, s := range streams {
			got := s.UntilEnd(wait)
			if len(got) != 1 || got[0].Retry == "" {
				t.Fatalf("stream %d ended with frames %v, want exactly one retry hint", i, got)
			}
			if d := retryMillis(t, got[0]); d < time.Second || d >= 3*time.Second {
				t.Errorf("stream %d: closing retry %v, want in [1s, 3s)", i, d)
			}
			if s.Err() != io.EOF {
				t.Errorf("stream %d: body ended with %v, want a clean end (EOF)", i, s.Err())
			}
		}
		resp := e.get(t, "topic=a", nil)
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("GET /events after hub.Close = %d, want 503", resp.StatusCode)
		}
	})
}

func TestEventsMultiTopicCursor(t *testing.T) {
	overTransports(t, func(t *testing.T, tr transport) {
		e := newEnvOver(t, tr, hub.Config{}, Config{})
		e.store.Add("a", 3)
		e.store.Add("b", 3)
		s := e.open(t, "topic=a&topic=b&topic=a", "a=1-0;b=2-0") // a duplicate topic counts once
		var last string
		var got []string
		for range 3 {
			f := s.NextEvent(wait)
			got, last = append(got, f.ID), f.ID
		}
		if want := []string{"a=2-0;b=2-0", "a=3-0;b=2-0", "b=3-0;a=3-0"}; !slices.Equal(got, want) {
			t.Errorf("Last-Event-ID a=1-0;b=2-0: ids %q, want %q", got, want)
		}
		s.Close()
		e.hub.Broadcast(e.store.Add("b", 1)[0]) // published while the client is away
		r := e.open(t, "topic=a&topic=b", last)
		if f := r.NextEvent(wait); f.ID != "b=4-0;a=3-0" || !strings.Contains(f.Data, `"b"`) {
			t.Errorf("reconnect with %q: frame %v, want b's 4-0 with cursor b=4-0;a=3-0", last, f)
		}
	})
}

// TestEventsMultiTopicCursorNotAheadOfFrames: a multi-topic cursor must only name positions the client has
// received when it reads that frame; otherwise a connection cut between two frames skips events on reconnect.
func TestEventsMultiTopicCursorNotAheadOfFrames(t *testing.T) {
	overTransports(t, func(t *testing.T, tr transport) {
		e := newEnvOver(t, tr, hub.Config{}, Config{})
		e.store.Hold("a")
		s := e.open(t, "topic=a&topic=b", "")
		s.Next(wait) // retry: the subscription exists, Start waits for a's live feed
		a := &hub.Event{Topic: "a", ID: hub.ID{Ms: 1}, IDText: "1-0", Type: "progress", Data: []byte(`1`)}
		b := &hub.Event{Topic: "b", ID: hub.ID{Ms: 1}, IDText: "1-0", Type: "progress", Data: []byte(`2`)}
		e.hub.Broadcast(a) // both queue up and are written as one batch
		e.hub.Broadcast(b)
		e.store.Release("a")
		first, second := s.NextEvent(wait), s.NextEvent(wait)
		if first.ID != "a=1-0;b=0-0" || second.ID != "b=1-0;a=1-0" {
			t.Errorf("frames %q then %q, want a=1-0;b=0-0 then b=1-0;a=1-0: the first must not claim b's 1-0", first.ID, second.ID)
		}
	})
}

type statusErr int

func (s statusErr) Error() string { return fmt.Sprintf("status %d", int(s)) }
func (s statusErr) Status() int   { return int(s) }

func TestEventsAuthorize(t *testing.T) {
	overTransports(t, func(t *testing.T, tr transport) {
		var (
			mu     sync.Mutex
			until  time.Time
			denied error
			asked  []string
		)
		set := func(u time.Time, err error) { mu.Lock(); until, denied = u, err; mu.Unlock() }
		e := newEnvOver(t, tr, hub.Config{}, Config{Authorize: func(r *http.Request, topics []string) (Access, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = topics
			return Access{Until: until}, denied
		}})
		for _, c := range []struct {
			err    error
			status int
		}{{statusErr(401), 401}, {errors.New("not yours"), 403}} {
			set(time.Time{}, c.err)
			resp := e.get(t, "topic=a&topic=b", nil)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.status || !strings.Contains(string(body), c.err.Error()) {
				t.Errorf("Authorize returning %v: GET = %d %s, want %d with the message", c.err, resp.StatusCode, body, c.status)
			}
			mu.Lock()
			if !slices.Equal(asked, []string{"a", "b"}) {
				t.Errorf("Authorize asked about %q, want [a b]", asked)
			}
			mu.Unlock()
		}

		set(time.Now().Add(100*time.Millisecond), nil)
		s := e.open(t, "topic=a", "")
		got := s.UntilEnd(wait)
		if len(got) != 2 || got[1].Event != "auth-expired" {
			t.Errorf("expiring permission: frames %v, want the retry hint then event auth-expired", got)
		}
	})
}
