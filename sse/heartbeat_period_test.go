package sse

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/hub/hubtest"
)

// beatRecorder is a ResponseWriter that notes, on the bubble's clock, when each heartbeat comment was written.
type beatRecorder struct {
	mu     sync.Mutex
	header http.Header
	beats  []time.Duration // since start
	start  time.Time
}

func (b *beatRecorder) Header() http.Header { return b.header }
func (b *beatRecorder) WriteHeader(int)     {}
func (b *beatRecorder) Flush()              {}

func (b *beatRecorder) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if bytes.Equal(p, heartbeat) {
		b.beats = append(b.beats, time.Since(b.start))
	}
	return len(p), nil
}

func (b *beatRecorder) seen() []time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]time.Duration(nil), b.beats...)
}

// quietStream runs one stream of a handler configured with cfg on a quiet topic, inside the bubble, for d of the
// bubble's clock, and returns when each heartbeat was written.
func quietStream(t *testing.T, cfg Config, d time.Duration) []time.Duration {
	t.Helper()
	h := hub.New(hubtest.NewStore(), hub.Config{})
	cfg.NoDetach = true // the raw engine waits on epoll, outside the bubble's clock
	hd := New(h, cfg)
	ctx, cancel := context.WithCancel(t.Context())
	rec := &beatRecorder{header: http.Header{}, start: time.Now()}
	done := make(chan struct{})
	go func() {
		defer close(done)
		hd.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, http.MethodGet, "/events?topic=a", nil))
	}()
	time.Sleep(d)
	synctest.Wait()
	beats := rec.seen()
	cancel()
	<-done
	h.Close()
	if err := hd.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown = %v", err)
	}
	return beats
}

// Without a configured period, a quiet stream hears a heartbeat every 15 s: never later (a proxy's 30 s or 60 s idle
// timeout must not cut it), and never more than one wheel tick early.
func TestHeartbeatDefaultsTo15s(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		beats := quietStream(t, Config{}, 46*time.Second)
		if len(beats) != 3 {
			t.Fatalf("heartbeats in 46 s of quiet with the default period = %v, want 3 (one each 15 s)", beats)
		}
		last := time.Duration(0)
		for i, at := range beats {
			if gap := at - last; gap > 15*time.Second || gap < 15*time.Second-beatEvery(15*time.Second) {
				t.Errorf("heartbeat %d came %v after the last write, want within (14.75 s, 15 s]", i+1, gap)
			}
			last = at
		}
	})
}

// A configured period holds from above as well as from below: three heartbeats within three periods.
func TestHeartbeatNeverLaterThanItsPeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const period = 2 * time.Second
		beats := quietStream(t, Config{Heartbeat: period}, 3*period)
		if len(beats) != 3 || beats[2] > 3*period {
			t.Fatalf("heartbeats in 3 periods (%v) of quiet = %v, want 3, the last by %v", period, beats, 3*period)
		}
	})
}

// The same bound on real streams over every transport, the raw engine's heartbeat wheel among them: in ten periods of
// quiet a stream hears about ten heartbeats. A scheduler that runs each one a little late still gives more than
// seven; a period twice as long as configured gives five.
func TestHeartbeatCountOverTenPeriods(t *testing.T) {
	overTransports(t, func(t *testing.T, tr transport) {
		const period = 200 * time.Millisecond
		e := newEnvOver(t, tr, hub.Config{}, Config{Heartbeat: period})
		s := e.open(t, "topic=a", "")
		s.Next(wait) // retry
		beats := 0
		window := time.NewTimer(10 * period)
		defer window.Stop()
	count:
		for {
			select {
			case f, ok := <-s.Frames():
				if !ok {
					t.Fatalf("stream ended after %d heartbeats: %v", beats, s.Err())
				}
				if f.Comment != "heartbeat" {
					t.Fatalf("quiet stream: frame %v, want :heartbeat", f)
				}
				beats++
			case <-window.C:
				break count
			}
		}
		if beats < 7 {
			t.Errorf("heartbeats in 10 periods of %v = %d, want at least 7 (one a period)", period, beats)
		}
	})
}
