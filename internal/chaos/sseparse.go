package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"time"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/sseframe"
)

// read parses the stream frame by frame.
func (c *Client) read(ctx context.Context, body io.Reader, cursor *string, retry *time.Duration) error {
	r := sseframe.NewReader(body, 16<<10)
	prev, silence := time.Now(), time.Duration(0)
	for {
		if err := c.waitResumed(ctx); err != nil {
			return err
		}
		f, err := r.Next()
		if err != nil {
			return err
		}
		now := time.Now()
		if gap := now.Sub(prev); gap > silence { // rarely true, so the lock is rarely taken
			silence = gap
			c.count(func(s *ClientStats) { s.MaxSilence = max(s.MaxSilence, gap) })
		}
		prev = now
		if f.IsComment {
			c.count(func(s *ClientStats) { s.Heartbeats++ })
			continue
		}
		if f.HasID {
			*cursor = string(f.ID) // as EventSource: the last id field seen becomes the Last-Event-ID
		}
		if d, ok := f.Hint(); ok && d > 0 {
			*retry = d
		}
		c.dispatch(f, now)
	}
}

// dispatch records one frame. What the hub never sends (an id or data without event:, an id that does not parse, a
// reset without a topic) is counted as malformed rather than dropped, so the verdict sees it.
func (c *Client) dispatch(f *sseframe.Frame, now time.Time) {
	if string(f.Event) == "reset" {
		c.reset(f)
		return
	}
	if len(f.Event) == 0 {
		if f.HasID || f.HasData {
			c.count(func(s *ClientStats) { s.Malformed++ })
		}
		return // otherwise a retry hint or comments only
	}
	if !f.HasID {
		return // an ephemeral event: nothing to verify
	}
	topic, idText := c.cfg.Topics[0], f.ID
	if t, rest, ok := bytes.Cut(f.ID, []byte("=")); ok { // a multi-topic cursor starts with the event's own position
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
		g.Data = bytes.Clone(f.Data)
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
func (c *Client) reset(f *sseframe.Frame) {
	var r struct {
		Topic, Reason string
		Oldest        *string
	}
	err := json.Unmarshal(f.Data, &r)
	g := Got{Reset: true, Reason: r.Reason, Data: bytes.Clone(f.Data)}
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
