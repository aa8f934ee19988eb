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
		line, err := readLine(r)
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
			f.event, f.data, f.hasID = f.event[:0], f.data[:0], false
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

// readLine returns the next line without its LF (or CRLF); the slice is valid until the next call.
func readLine(r *bufio.Reader) ([]byte, error) {
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

func (c *Client) dispatch(f *frame, now time.Time) {
	if string(f.event) == "reset" {
		var r struct {
			Topic, Reason string
			Oldest        *string
		}
		_ = json.Unmarshal(f.data, &r)
		g := Got{Reset: true, Reason: r.Reason, Data: bytes.Clone(f.data)}
		if r.Oldest != nil {
			g.ID, _ = hub.ParseID(*r.Oldest)
		}
		c.mu.Lock()
		c.stats.Resets++
		c.got[r.Topic] = append(c.got[r.Topic], g)
		c.mu.Unlock()
		return
	}
	if !f.hasID || len(f.event) == 0 {
		return // a comment-only frame or an ephemeral event: nothing to verify
	}
	topic, idText := c.cfg.Topics[0], f.id
	if t, rest, ok := bytes.Cut(f.id, []byte("=")); ok { // a multi-topic cursor starts with the event's own position
		topic = string(t)
		idText, _, _ = bytes.Cut(rest, []byte(";"))
	}
	id, err := hub.ParseID(string(idText))
	if err != nil {
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
