package sse

import "time"

// output is where a stream's bytes go, framed for it: net/http's ResponseWriter (httpOutput: HTTP/2, TLS, or every
// stream when the raw engine is off), or the raw connection of an HTTP/1.1 stream taken over from net/http
// (rawOutput, see rawStream), which frames its body as chunks itself. The stream builds payloads and leaves the
// framing, the deadlines and what a failed write means to the output.
type output interface {
	// open starts the response and returns its first bytes: the head, where the output writes it itself, and the
	// frame p.
	open(p []byte) []byte
	// room is how many bytes the output needs in front of a payload for its framing; frame frames the payload
	// b[room():], in place where it can, and returns the buffer to keep (it may have grown) and the bytes to write.
	room() int
	frame(b []byte) (keep, out []byte)
	// heartbeat is the heartbeat comment, framed.
	heartbeat() []byte
	// last frames p as the last words of the stream, ending the body where the output frames it.
	last(p []byte) []byte

	// write writes the whole of b, flushed, unless the subscription (done) has ended: then it returns errEnded,
	// except for the last words (after finalDeadline). A raw output on a shared worker keeps what the socket does
	// not take at once as pending instead (holding), and b with it: the caller must not reuse b then.
	write(b []byte) error
	holding() bool
	// setWriteDeadline bounds the writes from now on. rest tells the output that the stream has written what it had
	// and waits; it reports true if it cleared the deadline (the next write must arm it again): over HTTP/2 a
	// deadline that passes while nothing is written resets the stream.
	setWriteDeadline(t time.Time)
	rest() bool
	// cut ends a write in progress by at (now: at once); it may be called from any goroutine (the subscription's
	// end). After release it does nothing.
	cut(at time.Time)
	// finalDeadline is the deadline of the last words of a stream that has ended, which cut may have set to the past.
	finalDeadline(t time.Time)
	// release tells the output that its stream is done with it: net/http's writer is not the stream's once the
	// handler returns, so a cut from another goroutine must not touch it then.
	release()
	// leftOnError reports whether any failed write means the client left: true where nothing else tells (a raw
	// connection); net/http cancels the request's context instead.
	leftOnError() bool
}
