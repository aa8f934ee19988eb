package sse

import (
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"
)

// rawOutput writes HTTP/1.1 chunks straight to the connection, one write syscall per batch. On a shared worker
// (shared) it never blocks: what the socket does not take at once is kept as pending, in order, and the stream
// moves to a goroutine of its own to write it there. Elsewhere (the handler's goroutine, or the stream's own) a write
// blocks, within the deadline, which is armed only then: a write that does not wait needs none.
type rawOutput struct {
	nc       net.Conn
	hdr      http.Header     // the response head's, which the raw output writes itself
	rc       syscall.RawConn // nil if nc has no file descriptor: then every write blocks
	done     <-chan struct{} // the subscription's end, checked once a blocking write's deadline is armed
	shared   bool
	final    bool // the stream has ended and writes its last words: the end no longer stops a write
	deadline time.Time
	pending  []byte

	// arguments and results of the non-blocking write, whose callback (try) is made once per stream
	b   []byte
	n   int
	err error
	try func(fd uintptr) bool
}

func newRawOutput(nc net.Conn, done <-chan struct{}, hdr http.Header) *rawOutput {
	o := &rawOutput{nc: nc, done: done, hdr: hdr}
	if sc, ok := nc.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			o.rc = rc
			o.try = o.tryOnce
		}
	}
	return o
}

// open writes the head as net/http would for an event stream: chunked, and closed at the end (the connection is
// never reused after a stream).
func (o *rawOutput) open(p []byte) []byte {
	setStreamHeaders(o.hdr)
	head := append(rawHeader(o.hdr, time.Now()), chunk(p)...)
	o.hdr = nil // an idle stream keeps nothing of its request
	return head
}

func (o *rawOutput) room() int { return chunkRoom }

func (o *rawOutput) frame(b []byte) (keep, out []byte) { return chunkInPlace(b) }

func (o *rawOutput) heartbeat() []byte { return heartbeatChunk }

func (o *rawOutput) last(p []byte) []byte { return append(chunk(p), lastChunk...) }

// leftOnError: a raw connection whose write fails for anything but a timeout was reset or closed by the client.
func (o *rawOutput) leftOnError() bool { return true }

func (o *rawOutput) write(b []byte) error {
	switch {
	case len(o.pending) > 0: // the caller stops writing once blocked; a final frame may still queue behind
		o.pending = append(o.pending, b...)
		return nil
	case !o.shared || o.rc == nil:
		return o.writeBlocking(b)
	case o.ended():
		return errEnded
	}
	n, err := o.tryWrite(b)
	if err == nil && n < len(b) {
		o.pending = b[n:] // not copied: while blocked, the output holds b and its writer must not reuse it
	}
	return err
}

// share moves the output to a shared worker. Its writes do not wait, so they need no deadline; the connection's
// must go, since one that has passed refuses even a write that does not wait.
func (o *rawOutput) share() {
	_ = o.nc.SetWriteDeadline(time.Time{})
	o.shared = true
}

// holding reports whether a write is left pending: the stream must move to its own goroutine before writing more.
func (o *rawOutput) holding() bool { return len(o.pending) > 0 }

// rest: a shared worker's writes need no deadline, and a blocking write's is armed right before it.
func (o *rawOutput) rest() bool { return false }

func (o *rawOutput) ended() bool {
	if o.final {
		return false
	}
	select {
	case <-o.done:
		return true
	default:
		return false
	}
}

// flushPending writes what is pending, blocking within the deadline.
func (o *rawOutput) flushPending() error {
	err := o.writeBlocking(o.pending)
	o.pending = nil
	return err
}

// writeBlocking arms the deadline and then checks the subscription's end: cut (on its wake) sets the deadline to now
// after the end, so whichever of the two comes last, an evicted client's write does not wait.
func (o *rawOutput) writeBlocking(b []byte) error {
	_ = o.nc.SetWriteDeadline(o.deadline)
	if o.ended() {
		return errEnded
	}
	_, err := o.nc.Write(b)
	return err
}

// tryWrite writes what the socket takes now, without waiting.
func (o *rawOutput) tryWrite(b []byte) (int, error) {
	o.b, o.n, o.err = b, 0, nil
	if err := o.rc.Write(o.try); err != nil {
		return 0, err
	}
	n, err := o.n, o.err
	o.b, o.err = nil, nil
	if err == syscall.EAGAIN {
		err = nil
	}
	return n, err
}

// tryOnce is the RawConn callback: returning true means "do not wait for the socket to become writable".
func (o *rawOutput) tryOnce(fd uintptr) bool {
	for {
		n, err := syscall.Write(int(fd), o.b)
		if err == syscall.EINTR {
			continue
		}
		o.n, o.err = max(n, 0), err
		return true
	}
}

func (o *rawOutput) setWriteDeadline(t time.Time) { o.deadline = t }
func (o *rawOutput) cut(at time.Time)             { _ = o.nc.SetWriteDeadline(at) }
func (o *rawOutput) release()                     {} // the connection is the stream's until it closes it

// finalDeadline also applies to a write that does not wait: the connection's deadline, once passed, refuses any.
func (o *rawOutput) finalDeadline(t time.Time) {
	o.final, o.deadline = true, t
	_ = o.nc.SetWriteDeadline(t)
}

// chunkRoom is what a raw stream reserves before each payload: up to 8 hex digits of size and CRLF.
const chunkRoom = 10

// lastChunk ends a chunked body.
var lastChunk = []byte("0\r\n\r\n")

// chunkInPlace frames the payload b[chunkRoom:] as one chunk: the size goes right before it and CRLF after it. It
// returns b (grown by the CRLF; the buffer to keep) and the chunk, which starts inside it.
func chunkInPlace(b []byte) (buf, chunk []byte) {
	n := len(b) - chunkRoom
	b = append(b, '\r', '\n')
	var hex [8]byte
	size := strconv.AppendUint(hex[:0], uint64(n), 16)
	start := chunkRoom - 2 - len(size)
	copy(b[start:], size)
	b[chunkRoom-2], b[chunkRoom-1] = '\r', '\n'
	return b, b[start:]
}

// chunk returns p as one chunk, in a new slice: for the few fixed frames (retry hint, heartbeat, final words).
func chunk(p []byte) []byte {
	b := make([]byte, chunkRoom, chunkRoom+len(p)+2)
	_, c := chunkInPlace(append(b, p...))
	return c
}

var heartbeatChunk = chunk(heartbeat)

// rawHeader is the response head of a raw stream: net/http's own for an event stream, chunked and closed at the end.
func rawHeader(h http.Header, now time.Time) []byte {
	b := []byte("HTTP/1.1 200 OK\r\n")
	h.Set("Date", now.UTC().Format(http.TimeFormat))
	h.Set("Transfer-Encoding", "chunked")
	h.Set("Connection", "close")
	w := appendWriter{b}
	_ = h.Write(&w)
	return append(w.b, '\r', '\n')
}

type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }
