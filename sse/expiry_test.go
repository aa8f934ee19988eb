package sse

import (
	"io"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/rig"
)

// expiring authorizes every request until ttl (a query parameter, a duration) from now.
func expiring(r *http.Request, _ []string) (Access, error) {
	ttl, err := time.ParseDuration(r.URL.Query().Get("ttl"))
	if err != nil {
		return Access{}, err
	}
	return Access{Until: time.Now().Add(ttl)}, nil
}

// A stream whose permission ends says so with an auth-expired event and then ends cleanly: over HTTP/1.1 the chunked
// body's end, over HTTP/2 END_STREAM (not RST_STREAM, after which a client may drop what came before it). Eight at
// once, since a race between the last frame and the end shows only now and then.
func TestExpiryEndsTheStreamCleanly(t *testing.T) {
	overTransports(t, func(t *testing.T, tr transport) {
		e := newEnvOver(t, tr, hub.Config{}, Config{Authorize: expiring})
		var streams []*rig.Stream
		for i := range 8 {
			streams = append(streams, e.open(t, "topic=a&ttl="+strconv.Itoa(150+10*i)+"ms", ""))
		}
		for i, s := range streams {
			got := s.UntilEnd(wait)
			if len(got) != 2 || got[0].Retry == "" || got[1].Event != "auth-expired" {
				t.Errorf("stream %d: frames %v, want the retry hint then event auth-expired", i, got)
			}
			if s.Err() != io.EOF {
				t.Errorf("stream %d: body ended with %v, want a clean end (EOF)", i, s.Err())
			}
		}
	})
}

// The end of a permission is kept during a replay too: a client whose replay outlasts its permission gets no event
// written after it ended, however the events reach it.
func TestExpiryDuringReplay(t *testing.T) {
	overTransports(t, func(t *testing.T, tr transport) {
		granted := make(chan time.Time, 1)
		e := newEnvOver(t, tr, hub.Config{ReplayPage: 2}, Config{Authorize: func(r *http.Request, topics []string) (Access, error) {
			a, err := expiring(r, topics)
			granted <- a.Until
			return a, err
		}})
		e.store.Add("a", 6)
		open := e.store.GateReads("a", hub.ID{Ms: 2}) // the replay stops after its first page until open
		t.Cleanup(open)
		s := e.open(t, "topic=a&ttl=300ms", "0-0")
		for _, want := range []string{"1-0", "2-0"} {
			if f := s.NextEvent(wait); f.ID != want {
				t.Fatalf("replay from 0-0: frame %v, want id %s", f, want)
			}
		}
		<-time.After(time.Until(<-granted) + 10*time.Millisecond) // the permission ends while the replay waits
		open()
		got := s.UntilEnd(wait)
		var events []string
		for _, f := range got {
			if f.Comment == "" && f.Retry == "" {
				events = append(events, f.Event+" "+f.ID)
			}
		}
		if want := []string{"auth-expired "}; !slices.Equal(events, want) {
			t.Errorf("after the permission ended mid-replay: %q, want only %q", events, want)
		}
	})
}

// A stream that stays silent for longer than its write timeout, between heartbeats, stays open: the deadline bounds
// writes, not the quiet between them (over HTTP/2 a deadline left to pass resets the stream).
func TestQuietLongerThanWriteTimeout(t *testing.T) {
	overTransports(t, func(t *testing.T, tr transport) {
		e := newEnvOver(t, tr, hub.Config{}, Config{WriteTimeout: 100 * time.Millisecond, Heartbeat: 500 * time.Millisecond})
		s := e.open(t, "topic=a", "0-0")
		s.Next(wait) // retry
		if f := s.Next(wait); f.Comment != "heartbeat" {
			t.Fatalf("after 500ms of quiet: frame %v, want :heartbeat", f)
		}
		<-time.After(250 * time.Millisecond) // quiet again, for more than the write timeout
		e.hub.Broadcast(e.store.Add("a", 1)[0])
		if f := s.NextEvent(wait); f.ID != "1-0" {
			t.Fatalf("event after quiet: frame %v, want id 1-0", f)
		}
	})
}
