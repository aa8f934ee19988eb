package watch

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"time"
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

// maxLine bounds one line of the stream; the hub's events are at most limits.max_event_bytes.
const maxLine = 4 << 20

// readFrames parses the stream r into frames and passes each to emit until r ends or emit returns false. It returns
// the read error (io.EOF for a stream that ended).
func readFrames(r io.Reader, emit func(Frame) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	sc.Split(scanLines)
	var f Frame
	var data []string
	pending := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if pending {
				f.Data = strings.Join(data, "\n")
				if f.Event == "" && (f.HasID || data != nil) {
					f.Event = "message"
				}
				if !emit(f) {
					return nil
				}
			}
			f, data, pending = Frame{}, nil, false
		case line[0] == ':':
			if !emit(Frame{Comment: line[1:], IsComment: true}) {
				return nil
			}
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			pending = true
			switch field {
			case "id":
				f.ID, f.HasID = value, true
			case "event":
				f.Event = value
			case "data":
				data = append(data, value)
			case "trace":
				f.Trace = value
			case "retry":
				if ms, err := strconv.Atoi(value); err == nil && ms >= 0 {
					f.Retry = time.Duration(ms) * time.Millisecond
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.EOF
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
