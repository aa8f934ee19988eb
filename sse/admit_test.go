package sse

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/rig"
)

// full is a refusal that carries its status and headers, as limits.Refusal does.
type full struct{}

func (full) Error() string            { return "too many streams from 127.0.0.1" }
func (full) Status() int              { return http.StatusTooManyRequests }
func (full) SetHeaders(h http.Header) { h.Set("Retry-After", "7") }

// What Admit holds is held for the stream's whole life, not the ServeHTTP call's (a raw stream outlives it), and
// given back once: at once for a request refused after Admit, when the client leaves for a stream.
func TestAdmitHoldsForTheStreamsLife(t *testing.T) {
	overTransports(t, func(t *testing.T, tr transport) {
		var held, admitted atomic.Int64
		var refuse atomic.Bool
		e := newEnvOver(t, tr, hub.Config{}, Config{Admit: func(w http.ResponseWriter, _ *http.Request) (func(), error) {
			if refuse.Load() {
				return nil, full{}
			}
			w.Header().Set("Access-Control-Allow-Origin", "https://console.example")
			admitted.Add(1)
			held.Add(1)
			var once atomic.Bool
			return func() {
				if !once.CompareAndSwap(false, true) {
					t.Errorf("a release was called twice")
				}
				held.Add(-1)
			}, nil
		}})

		resp := e.get(t, "topic=bad*topic", nil)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || held.Load() != 0 {
			t.Fatalf("request refused after Admit: status %d, %d held; want 400 and 0", resp.StatusCode, held.Load())
		}

		s := e.open(t, "topic=a", "")
		s.Next(wait) // the retry hint: the stream is open
		if got := s.Header.Get("Access-Control-Allow-Origin"); got != "https://console.example" {
			t.Errorf("stream response: Access-Control-Allow-Origin %q, want the one Admit set", got)
		}
		if tr.name == rawHTTP1.name { // its handler returns once the stream is live; the stream holds on
			rig.Eventually(t, wait, "the handler is still running", func() bool { return goroutinesIn("sse.(*Handler).ServeHTTP") == 0 })
		}
		if held.Load() != 1 {
			t.Fatalf("open stream: %d held, want 1", held.Load())
		}
		s.Close()
		rig.Eventually(t, wait, "still held after the client left", func() bool { return held.Load() == 0 })

		refuse.Store(true)
		before := admitted.Load()
		resp = e.get(t, "topic=a", nil)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var msg map[string]string
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "7" ||
			json.Unmarshal(body, &msg) != nil || msg["error"] != (full{}).Error() {
			t.Errorf("Admit refusing with %v: GET = %d Retry-After %q %s; want 429, Retry-After 7 and the message as JSON",
				full{}, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
		if admitted.Load() != before || e.hub.Topics() != 0 {
			t.Errorf("a request Admit refused went on: %d admitted, %d topics subscribed", admitted.Load()-before, e.hub.Topics())
		}
	})
}

// An Admit error without a status of its own is answered 503.
func TestAdmitPlainErrorIs503(t *testing.T) {
	e := newEnv(t, Config{Admit: func(http.ResponseWriter, *http.Request) (func(), error) { return nil, errors.New("draining") }})
	resp := e.get(t, "topic=a", nil)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "draining") {
		t.Errorf("Admit returning a plain error: GET = %d %s, want 503 with its message", resp.StatusCode, body)
	}
}
