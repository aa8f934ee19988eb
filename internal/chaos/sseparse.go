package chaos

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"time"

	"github.com/syncverse/hub/hub"
)

// frame is the part of an SSE message the client needs.
type frame struct {
	id, event []byte
	hasID     bool
	hasData   bool // a data: line came, kept in data or not
	data      []byte
}

// read parses the stream line by line. Data lines are kept only for resets or with KeepData.
func (c *Client) read(ctx context.Context, body io.Reader, cursor *string, retry *time.Duration) error {
	r := bufio.NewReaderSize(body, 16<<10)
	var f frame
	prev, silence := time.Now(), time.Duration(0)
	for {
		if err := c.waitResumed(ctx); err != nil {
			return err
		}
		line, err := ReadLine(r)
		if err != nil {
			return err
		}
		now := time.Now()
		if gap := now.Sub(prev); gap > silence { // rarely true, so the lock is rarely taken
			silence = gap
			c.count(func(s *ClientStats) { s.MaxSilence = max(s.MaxSilence, gap) })
		}
		prev = now
		switch {
		case len(line) == 0:
			if f.hasID {
				*cursor = string(f.id) // as EventSource: the last id field seen becomes the Last-Event-ID
			}
			c.dispatch(&f, now)
			f.event, f.data, f.hasID, f.hasData = f.event[:0], f.data[:0], false, false
		case line[0] == ':':
			c.count(func(s *ClientStats) { s.Heartbeats++ })
		default:
			field, value, _ := bytes.Cut(line, []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			switch string(field) {
			case "id":
				f.id, f.hasID = append(f.id[:0], value...), true
			case "event":
				f.event = append(f.event[:0], value...)
			case "data":
				f.hasData = true
				if c.cfg.KeepData || string(f.event) == "reset" {
					if len(f.data) > 0 {
						f.data = append(f.data, '\n')
					}
					f.data = append(f.data, value...)
				}
			case "retry":
				if ms, err := strconv.Atoi(string(value)); err == nil && ms > 0 {
					*retry = time.Duration(ms) * time.Millisecond
				}
			}
		}
	}
}

// ReadLine returns the next line of an SSE stream without its LF (or CRLF); the slice is valid until the next
// call. The fleet bench reads with it too.
func ReadLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		long := append([]byte(nil), line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = r.ReadSlice('\n')
			long = append(long, line...)
		}
		line = long
	}
	if err != nil {
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// dispatch records one frame. What the hub never sends (an id or data without event:, an id that does not parse, a
// reset without a topic) is counted as malformed rather than dropped, so the verdict sees it.
func (c *Client) dispatch(f *frame, now time.Time) {
	if string(f.event) == "reset" {
		c.reset(f)
		return
	}
	if len(f.event) == 0 {
		if f.hasID || f.hasData {
			c.count(func(s *ClientStats) { s.Malformed++ })
		}
		return // otherwise a retry hint or comments only
	}
	if !f.hasID {
		return // an ephemeral event: nothing to verify
	}
	topic, idText := c.cfg.Topics[0], f.id
	if t, rest, ok := bytes.Cut(f.id, []byte("=")); ok { // a multi-topic cursor starts with the event's own position
		topic = string(t)
		idText, _, _ = bytes.Cut(rest, []byte(";"))
	}
	id, err := hub.ParseID(string(idText))
	if err != nil {
		c.count(func(s *ClientStats) { s.Malformed++ })
		return
	}
	g := Got{ID: id}
	if c.cfg.KeepData {
		g.Data = bytes.Clone(f.data)
	}
	c.mu.Lock()
	c.got[topic] = append(c.got[topic], g)
	if c.last[topic].Less(id) {
		c.last[topic] = id
	}
	if c.measure && len(c.lat) < 1<<20 {
		c.lat = append(c.lat, uint16(min(max(now.UnixMilli()-int64(id.Ms), 0), 65535)))
	}
	c.mu.Unlock()
}

// reset records an event: reset under its topic, with the oldest id it names.
func (c *Client) reset(f *frame) {
	var r struct {
		Topic, Reason string
		Oldest        *string
	}
	err := json.Unmarshal(f.data, &r)
	g := Got{Reset: true, Reason: r.Reason, Data: bytes.Clone(f.data)}
	if err == nil && r.Oldest != nil {
		g.ID, err = hub.ParseID(*r.Oldest)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stats.Resets++
	if err != nil || r.Topic == "" {
		c.stats.Malformed++
		return
	}
	c.got[r.Topic] = append(c.got[r.Topic], g)
}
