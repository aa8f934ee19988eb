package sse

import (
	"context"
	"net/http"
	"sync/atomic"
)

// A middleware that holds something for as long as a stream is open (a connection slot) cannot defer its release:
// an HTTP/1.1 stream outlives its handler's call. Keep hands the release to the stream, which calls it when it
// ends; if the request never becomes such a stream, the middleware's own call does.

type slotKey struct{}

type slot struct{ release atomic.Pointer[func()] }

// Keep returns r carrying release, and the function the middleware must call once the handler has returned: it
// releases, unless the stream took release over.
func Keep(r *http.Request, release func()) (*http.Request, func()) {
	s := &slot{}
	s.release.Store(&release)
	return r.WithContext(context.WithValue(r.Context(), slotKey{}, s)), s.done
}

// done releases unless the stream took the release over.
func (s *slot) done() {
	if f := s.release.Swap(nil); f != nil {
		(*f)()
	}
}

// takeSlot moves r's release (see Keep) to the stream; nil when there is none.
func takeSlot(r *http.Request) func() {
	s, _ := r.Context().Value(slotKey{}).(*slot)
	if s == nil {
		return nil
	}
	if f := s.release.Swap(nil); f != nil {
		return *f
	}
	return nil
}
