package sse

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// httpOutput writes through net/http, which frames the body itself (chunks for HTTP/1.1, DATA frames for HTTP/2).
type httpOutput struct {
	w     http.ResponseWriter
	rc    *http.ResponseController
	done  <-chan struct{} // the subscription's end
	h2    bool
	final bool // the stream writes its last words: the end no longer stops a write
	// writing is set while a write is in progress, so that cut cuts only that: a deadline in the past would also fail
	// the end of the body that net/http writes after the handler returns, and over HTTP/2 it resets the stream.
	writing atomic.Bool
	// mu orders a cut (another goroutine's) before release: a cut that saw writing set may come after the write, and
	// by then the handler may have returned, its ResponseWriter gone back to net/http's pool (over HTTP/2: nil).
	mu       sync.Mutex
	released bool // under mu
}

func newHTTPOutput(w http.ResponseWriter, r *http.Request, done <-chan struct{}) *httpOutput {
	return &httpOutput{w: w, rc: http.NewResponseController(w), done: done, h2: r.ProtoMajor == 2}
}

func (o *httpOutput) open(p []byte) []byte {
	setStreamHeaders(o.w.Header())
	o.w.WriteHeader(http.StatusOK)
	return p
}

func (o *httpOutput) room() int                         { return 0 }
func (o *httpOutput) frame(b []byte) (keep, out []byte) { return b, b }
func (o *httpOutput) heartbeat() []byte                 { return heartbeat }
func (o *httpOutput) last(p []byte) []byte              { return p }
func (o *httpOutput) holding() bool                     { return false }
func (o *httpOutput) leftOnError() bool                 { return false }

// write marks the write in progress before it looks at the end, and the end (cut) looks at the mark after it is
// done: whichever of the two comes last sees the other, so a write to an evicted client does not wait.
func (o *httpOutput) write(b []byte) error {
	if !o.final {
		o.writing.Store(true)
		defer o.writing.Store(false)
		select {
		case <-o.done:
			return errEnded
		default:
		}
	}
	if _, err := o.w.Write(b); err != nil {
		return err
	}
	return o.rc.Flush()
}

func (o *httpOutput) setWriteDeadline(t time.Time) { _ = o.rc.SetWriteDeadline(t) }

func (o *httpOutput) rest() bool {
	if !o.h2 {
		return false // over HTTP/1.1 a deadline acts on writes only
	}
	_ = o.rc.SetWriteDeadline(time.Time{})
	return true
}

func (o *httpOutput) cut(at time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.released && o.writing.Load() {
		_ = o.rc.SetWriteDeadline(at)
	}
}

func (o *httpOutput) release() {
	o.mu.Lock()
	o.released = true
	o.mu.Unlock()
}

func (o *httpOutput) finalDeadline(t time.Time) {
	o.final = true
	_ = o.rc.SetWriteDeadline(t)
}

func setStreamHeaders(hdr http.Header) {
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Accel-Buffering", "no")
	hdr.Del("Content-Encoding")
}
