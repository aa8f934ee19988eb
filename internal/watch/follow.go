package watch

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"time"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/delay"
)

// Sink is what a Follower tells what it sees. Every method is called on the Follower's goroutine, one at a time.
type Sink interface {
	// Snapshot hands over a topic's snapshot, loaded at the start or again after a reset, as its envelopes in the
	// order to apply them. truncated says it did not fit the hub's limits.max_snapshot_bytes: the workflows it left
	// out appear as they publish.
	Snapshot(topic string, events []Event, truncated bool)
	// Event is one stored or ephemeral event, each stored one once and in order per topic.
	Event(ev Event)
	// Control is a frame of the hub's own (reset, auth-expired), told before the Follower acts on it.
	Control(ev Event)
	// State is the connection's state: connecting, live or reconnecting, with a detail for people.
	State(state, detail string)
	// Tick is called a few times a second, for redraws and clocks.
	Tick(now time.Time)
}

// Follower follows topics on one /events stream, resuming where it left off after every reconnect.
type Follower struct {
	Client *Client
	Topics []string
	Sink   Sink
	// History replays the last N events of each topic on the first connection, before live ones.
	History int
	// Presence asks for presence frames (presence=1), handed to the Sink as controls of type presence.
	Presence bool
	// ResetToSnapshot continues after a reset from the reloaded snapshot's cursor, as the console does: what the
	// snapshot holds is not delivered again. Without it, what follows the reset is passed on as it comes.
	ResetToSnapshot bool
	// IdleTimeout ends a stream that sent nothing, not even a heartbeat, for this long (default 90s).
	IdleTimeout time.Duration
	// TickEvery is how often Sink.Tick is called (default 250ms).
	TickEvery time.Duration
	Now       func() time.Time

	pos        map[string]*position
	needSnap   map[string]bool
	retry      time.Duration // the hub's retry: hint
	opened     bool          // the last attempt got a stream
	everOpened bool
	tick       <-chan time.Time
}

var (
	errAuthExpired = errors.New("the hub ended the stream: credentials expired")
	errIdle        = errors.New("the stream went silent")
)

// Follow follows the topics until ctx ends (it then returns nil) or the hub refuses in a way no retry mends.
func (f *Follower) Follow(ctx context.Context) error {
	f.init()
	t := time.NewTicker(f.TickEvery)
	defer t.Stop()
	f.tick = t.C
	f.Sink.State("connecting", f.Client.Base)
	for attempt := 0; ; {
		err := f.connect(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if isFatal(err) {
			return err
		}
		if f.opened {
			attempt, f.opened = 0, false
		}
		attempt++
		wait := f.backoff(attempt, err)
		f.Sink.State("reconnecting", fmt.Sprintf("%v; retrying in %s", err, wait.Round(100*time.Millisecond)))
		if !f.sleep(ctx, wait) {
			return nil
		}
	}
}

func (f *Follower) init() {
	if f.IdleTimeout <= 0 {
		f.IdleTimeout = 90 * time.Second
	}
	if f.TickEvery <= 0 {
		f.TickEvery = 250 * time.Millisecond
	}
	if f.Now == nil {
		f.Now = time.Now
	}
	f.pos, f.needSnap = map[string]*position{}, map[string]bool{}
	for _, t := range f.Topics {
		f.pos[t], f.needSnap[t] = &position{}, true
	}
}

// connect loads the snapshots still missing, then follows one stream until it ends.
func (f *Follower) connect(ctx context.Context) error {
	for _, t := range f.Topics {
		if !f.needSnap[t] {
			continue
		}
		if err := f.loadSnapshot(ctx, t); err != nil {
			return err
		}
		delete(f.needSnap, t)
	}
	return f.stream(ctx)
}

// loadSnapshot fetches topic's snapshot, hands it to the sink and continues the topic from its cursor.
func (f *Follower) loadSnapshot(ctx context.Context, topic string) error {
	snap, err := f.Client.Snapshot(ctx, topic)
	if err != nil {
		return err
	}
	f.Sink.Snapshot(topic, snapshotEvents(topic, snap, f.Now()), snap.Truncated)
	p := f.pos[topic]
	p.last, p.resume = snap.Cursor, snap.Cursor
	if f.History > 0 && !f.everOpened {
		p.last = "" // the replayed history is older than the cursor and is wanted
	}
	return nil
}

// snapshotEvents turns a snapshot's envelopes into events: workflows and locks by id, then the hub's verdicts, each
// about a workflow whose latest event may be newer than the verdict.
func snapshotEvents(topic string, snap *Snapshot, now time.Time) []Event {
	byID := func(maps ...map[string]json.RawMessage) []Event {
		var out []Event
		for _, m := range maps {
			for _, raw := range m {
				var env struct {
					ID   string          `json:"id"`
					Type string          `json:"type"`
					Data json.RawMessage `json:"data"`
				}
				if json.Unmarshal(raw, &env) != nil || len(env.Data) == 0 {
					continue
				}
				out = append(out, Event{Topic: topic, ID: env.ID, Type: cmp.Or(env.Type, "progress"), Data: env.Data,
					Time: eventTime(env.ID, now)})
			}
		}
		sort.SliceStable(out, func(i, j int) bool { return cmpID(out[i].ID, out[j].ID) < 0 })
		return out
	}
	return append(byID(snap.Workflows, snap.Locks), byID(snap.Health)...)
}

// eventTime is when Redis stored the event with stream id id, never later than now; now for an id without a time.
func eventTime(id string, now time.Time) time.Time {
	t := idTime(id)
	if t.IsZero() || t.After(now) {
		return now
	}
	return t
}

// eventsPath is the /events request: every topic, and on the first connection of a --history watch the history
// parameter instead of a position.
func (f *Follower) eventsPath() (string, http.Header) {
	q := url.Values{"topic": f.Topics}
	if f.Presence {
		q.Set("presence", "1")
	}
	hdr := http.Header{}
	if f.History > 0 && !f.everOpened {
		q.Set("history", strconv.Itoa(f.History))
	} else if c := cursorFor(f.Topics, f.pos); c != "" {
		hdr.Set("Last-Event-ID", c)
	}
	return "/events?" + q.Encode(), hdr
}

// stream follows one /events stream until it ends, ctx ends, or a frame asks for a reconnect.
func (f *Follower) stream(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	path, hdr := f.eventsPath()
	resp, err := f.Client.get(ctx, path, "text/event-stream", hdr)
	if err != nil {
		return err
	}
	f.opened, f.everOpened = true, true
	frames := make(chan Frame, 256)
	var readErr error
	go func() {
		defer close(frames)
		readErr = readFrames(resp.Body, func(fr Frame) bool {
			select {
			case frames <- fr:
				return true
			case <-ctx.Done():
				return false
			}
		})
	}()
	defer func() {
		cancel()
		resp.Body.Close()
		for range frames { // the reader is gone once frames is closed
		}
	}()
	f.Sink.State("live", "")
	last := f.Now()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case fr, ok := <-frames:
			if !ok {
				return fmt.Errorf("stream ended: %w", readErr)
			}
			last = f.Now()
			if err := f.handle(ctx, fr); err != nil {
				return err
			}
		case <-f.tick:
			now := f.Now()
			if now.Sub(last) > f.IdleTimeout {
				return fmt.Errorf("%w for %s", errIdle, f.IdleTimeout)
			}
			f.Sink.Tick(now)
		}
	}
}

// handle passes one frame on; an error ends the stream.
func (f *Follower) handle(ctx context.Context, fr Frame) error {
	if fr.Retry > 0 {
		f.retry = fr.Retry
	}
	if fr.IsComment || fr.Event == "" {
		return nil
	}
	now := f.Now()
	data := asJSON(fr.Data)
	if !fr.HasID {
		switch fr.Event {
		case "reset":
			return f.reset(ctx, data)
		case "auth-expired":
			f.Sink.Control(Event{Topic: f.soleTopic(), Type: fr.Event, Data: data, Time: now})
			return errAuthExpired
		case hub.PresenceType:
			if f.Presence {
				f.Sink.Control(Event{Topic: f.ephemeralTopic(data), Type: fr.Event, Data: data, Time: now})
			}
			return nil
		}
		f.Sink.Event(Event{Topic: f.ephemeralTopic(data), Type: fr.Event, Data: data, Time: now})
		return nil
	}
	topic, id, ok := eventTopic(fr.ID, f.Topics)
	if !ok {
		f.Sink.Event(Event{ID: fr.ID, Type: fr.Event, Data: data, Time: now})
		return nil
	}
	p := f.pos[topic]
	if p.last != "" && cmpID(id, p.last) <= 0 {
		return nil // a repeat: delivered before, or held in the snapshot
	}
	p.last, p.resume = id, id
	f.Sink.Event(Event{Topic: topic, ID: id, Type: fr.Event, Data: data, Time: eventTime(id, now), Trace: traceID(fr.Trace)})
	return nil
}

// reset handles the hub's word that a topic's history no longer reaches the position asked for: the topic's
// snapshot is loaded again and the stream goes on.
func (f *Follower) reset(ctx context.Context, data json.RawMessage) error {
	var r struct {
		Topic string `json:"topic"`
	}
	_ = json.Unmarshal(data, &r)
	topic := r.Topic
	if len(f.Topics) == 1 {
		topic = f.Topics[0]
	}
	f.Sink.Control(Event{Topic: topic, Type: "reset", Data: data, Time: f.Now()})
	p, ok := f.pos[topic]
	if !ok {
		return nil
	}
	if err := f.loadSnapshot(ctx, topic); err != nil {
		f.needSnap[topic] = true
		return fmt.Errorf("reload the snapshot of %s after a reset: %w", topic, err)
	}
	if !f.ResetToSnapshot {
		p.last = ""
	}
	return nil
}

func (f *Follower) soleTopic() string {
	if len(f.Topics) == 1 {
		return f.Topics[0]
	}
	return ""
}

// ephemeralTopic is the topic of an event without an id: the connection's only one, else the data's topic field
// when it names one of them.
func (f *Follower) ephemeralTopic(data json.RawMessage) string {
	if t := f.soleTopic(); t != "" {
		return t
	}
	var d struct {
		Topic string `json:"topic"`
	}
	if decodeLoose(data, &d) {
		if _, ok := f.pos[d.Topic]; ok {
			return d.Topic
		}
	}
	return ""
}

// asJSON is the frame's data as one JSON value; data that is not JSON becomes a JSON string.
func asJSON(s string) json.RawMessage {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

// backoff is the wait before the attempt-th reconnect in a row: the hub's retry hint, doubling per failure up to
// 30s, at least any Retry-After, and jittered down to half so that watchers do not come back all at once.
func (f *Follower) backoff(attempt int, err error) time.Duration {
	base := f.retry
	if base <= 0 {
		base = 3 * time.Second
	}
	d := base
	for i := 1; i < attempt && d < 30*time.Second; i++ {
		d *= 2
	}
	d = min(d, 30*time.Second)
	var se *StatusError
	if errors.As(err, &se) && se.RetryAfter > d {
		d = se.RetryAfter
	}
	return delay.Jitter(d/2, d)
}

// sleep waits d, ticking the sink meanwhile; false when ctx ended first.
func (f *Follower) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		case now := <-f.tick:
			f.Sink.Tick(now)
		}
	}
}
