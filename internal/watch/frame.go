package watch

import (
	"io"
	"time"

	"github.com/syncverse/hub/internal/sseframe"
)

// Frame is one message of an SSE stream as a line-reading EventSource sees it. A comment (the hub's heartbeat) is a
// Frame with Comment set and nothing else.
type Frame struct {
	ID    string
	HasID bool // an id: field was present; control frames and ephemeral events have none
	Event string
	Data  string
	Retry time.Duration // the retry: hint, when the frame carried one
	// Trace is the trace: field, the trace id of the publisher's span when the event carries one.
	Trace string
	// Comment is a line that started with a colon, without it.
	Comment   string
	IsComment bool
}

// readFrames parses the stream r into frames and passes each to emit until r ends or emit returns false. It returns
// the read error (io.EOF for a stream that ended). A message without event: is a "message", as EventSource names it.
func readFrames(r io.Reader, emit func(Frame) bool) error {
	fr := sseframe.NewReader(r, 64<<10)
	for {
		f, err := fr.Next()
		if err != nil {
			return err
		}
		out := Frame{Comment: string(f.Comment), IsComment: f.IsComment}
		if !f.IsComment {
			out = Frame{ID: string(f.ID), HasID: f.HasID, Event: string(f.Event), Data: string(f.Data), Trace: string(f.Trace)}
			out.Retry, _ = f.Hint()
			if out.Event == "" && (f.HasID || f.HasData) {
				out.Event = "message"
			}
		}
		if !emit(out) {
			return nil
		}
	}
}
