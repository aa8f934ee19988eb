// Package sseframe reads the hub's /events wire as a line-reading EventSource does: lines ended by LF, CRLF or a
// lone CR, "field: value" lines gathered into a frame that a blank line ends, comments on lines of their own. It is
// the one parser of that wire: `hub watch` reads with it, and so do the tests' client, the fault suite's clients and
// the load generator's. It imports nothing of the hub.
package sseframe

import (
	"bufio"
	"bytes"
	"io"
	"strconv"
	"time"
)

// MaxLine bounds one line of a stream; the hub's events are at most limits.max_event_bytes, far below it.
const MaxLine = 4 << 20

// Frame is one message of a stream, or one comment. Its slices belong to the Reader and hold until the next call
// of Next: a caller that keeps them copies them.
type Frame struct {
	ID      []byte
	HasID   bool // an id: line came; control frames and ephemeral events have none
	Event   []byte
	Data    []byte // the data: lines joined by LF
	HasData bool   // a data: line came, empty or not
	// Trace is the trace id of the event's publisher (the hub's trace: line), when it carried one.
	Trace []byte
	// Retry is the retry: hint in its text, when the frame carried one (Hint parses it).
	Retry []byte
	// Comment is a line that started with a colon, without it; such a frame carries nothing else.
	Comment   []byte
	IsComment bool
}

// Hint is the frame's retry: hint, when it carried one made of digits only, as EventSource takes it.
func (f *Frame) Hint() (time.Duration, bool) {
	if len(f.Retry) == 0 {
		return 0, false
	}
	for _, c := range f.Retry {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	ms, err := strconv.Atoi(string(f.Retry))
	if err != nil {
		return 0, false
	}
	return time.Duration(ms) * time.Millisecond, true
}

// Reader reads frames from one stream.
type Reader struct {
	sc      *bufio.Scanner
	msg     Frame // the message being gathered
	note    Frame // the last comment
	pending bool  // msg has had a field line since the last blank line
}

// NewReader reads r through a buffer of size bytes at first, grown for a longer line up to MaxLine.
func NewReader(r io.Reader, size int) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, size), MaxLine)
	sc.Split(scanLines)
	return &Reader{sc: sc, note: Frame{IsComment: true}}
}

// Next returns the next frame: a message when a blank line ends one (a blank line after nothing is skipped), or a
// comment as it comes (one inside a message leaves the message to go on). At the end of the stream it returns
// io.EOF, or the read error; a message left unfinished there is dropped.
func (r *Reader) Next() (*Frame, error) {
	f := &r.msg
	if !r.pending {
		*f = Frame{ID: f.ID[:0], Event: f.Event[:0], Data: f.Data[:0], Trace: f.Trace[:0], Retry: f.Retry[:0]}
	}
	for r.sc.Scan() {
		line := r.sc.Bytes()
		switch {
		case len(line) == 0:
			if r.pending {
				r.pending = false
				return f, nil
			}
		case line[0] == ':':
			r.note.Comment = append(r.note.Comment[:0], line[1:]...)
			return &r.note, nil
		default:
			field, value := Field(line)
			r.pending = true
			switch string(field) {
			case "id":
				f.ID, f.HasID = append(f.ID[:0], value...), true
			case "event":
				f.Event = append(f.Event[:0], value...)
			case "data":
				if f.HasData {
					f.Data = append(f.Data, '\n')
				}
				f.Data, f.HasData = append(f.Data, value...), true
			case "trace":
				f.Trace = append(f.Trace[:0], value...)
			case "retry":
				f.Retry = append(f.Retry[:0], value...)
			}
		}
	}
	if err := r.sc.Err(); err != nil {
		return nil, err
	}
	return nil, io.EOF
}

// Field splits a line into its field name and value: the value after the first colon, less one space after it; a
// line without a colon is a field with an empty value.
func Field(line []byte) (field, value []byte) {
	field, value, _ = bytes.Cut(line, []byte(":"))
	return field, bytes.TrimPrefix(value, []byte(" "))
}

// scanLines splits at LF, CRLF or a lone CR, as the SSE specification says.
func scanLines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	for i, c := range data {
		switch c {
		case '\n':
			return i + 1, data[:i], nil
		case '\r':
			if i+1 < len(data) {
				if data[i+1] == '\n' {
					return i + 2, data[:i], nil
				}
				return i + 1, data[:i], nil
			}
			if atEOF {
				return i + 1, data[:i], nil
			}
			return 0, nil, nil // a CR at the end of the buffer may be half of a CRLF
		}
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}
