package hub

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// fakeStore is an in-memory, deterministic Store. Ids of a topic are <n>-0 for n = 1, 2, ...; each event's Prev is
// the id before it, as the publish script writes them.
type fakeStore struct {
	mu        sync.Mutex
	streams   map[string][]*Event
	next      map[string]uint64
	ready     map[string]chan struct{}
	hold      bool // Follow returns a channel the test closes with release
	follows   map[string]int
	unfollows map[string]int
	readErrs  int // the next readErrs Read calls fail
	pageMax   int // Read and Tail return at most this many events at once, as a store bounding pages in bytes; 0: no bound
	reads     int
	afterRead func(topic string, after ID) // runs after Read computed its answer, outside the lock
}

func newFakeStore() *fakeStore {
	return &fakeStore{
		streams: map[string][]*Event{}, next: map[string]uint64{}, ready: map[string]chan struct{}{},
		follows: map[string]int{}, unfollows: map[string]int{},
	}
}

// append stores n new events of topic and returns them.
func (f *fakeStore) append(topic string, n int) []*Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*Event
	for range n {
		s := f.streams[topic]
		var prev ID
		if len(s) > 0 {
			prev = s[len(s)-1].ID
		}
		f.next[topic]++
		id := ID{Ms: f.next[topic]}
		ev := &Event{Topic: topic, ID: id, IDText: id.String(), Prev: prev, Type: "progress",
			Data: fmt.Appendf(nil, `{"n":%d}`, id.Ms), Source: SourceLive}
		f.streams[topic] = append(s, ev)
		out = append(out, ev)
	}
	return out
}

// trim drops the oldest events of topic, keeping keep, as MAXLEN does.
func (f *fakeStore) trim(topic string, keep int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.streams[topic]
	if len(s) > keep {
		f.streams[topic] = slices.Clone(s[len(s)-keep:])
	}
}

// dropNewest drops the newest n events of topic, as a failover to a replica that had not received them does; later
// ids keep growing, the first naming the newest survivor as its Prev.
func (f *fakeStore) dropNewest(topic string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.streams[topic]
	f.streams[topic] = s[:max(0, len(s)-n)]
}

// lose empties topic as a Redis restart without persistence would; later ids keep growing, with Prev 0-0 first.
func (f *fakeStore) lose(topic string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.streams[topic] = nil
}

func (f *fakeStore) Follow(topic string) <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.follows[topic]++
	ch := make(chan struct{})
	f.ready[topic] = ch
	if !f.hold {
		close(ch)
	}
	return ch
}

func (f *fakeStore) release(topic string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	close(f.ready[topic])
}

func (f *fakeStore) Unfollow(topic string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.unfollows[topic]++
}

func (f *fakeStore) counts(topic string) (follows, unfollows int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.follows[topic], f.unfollows[topic]
}

func (f *fakeStore) Read(ctx context.Context, topic string, after ID, limit int) ([]*Event, bool, error) {
	f.mu.Lock()
	f.reads++
	if f.readErrs > 0 {
		f.readErrs--
		f.mu.Unlock()
		return nil, false, fmt.Errorf("fake store: read %s: connection refused", topic)
	}
	if f.pageMax > 0 {
		limit = min(limit, f.pageMax)
	}
	var out []*Event
	more := false
	for _, ev := range f.streams[topic] {
		if after.Less(ev.ID) {
			if len(out) == limit {
				more = true
				break
			}
			out = append(out, ev)
		}
	}
	hook := f.afterRead
	f.mu.Unlock()
	if hook != nil {
		hook(topic, after)
	}
	return out, more, nil
}

func (f *fakeStore) Tail(ctx context.Context, topic string, n int) ([]*Event, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.streams[topic]
	tail := s[max(0, len(s)-n):]
	if f.pageMax > 0 && len(tail) > f.pageMax {
		return slices.Clone(tail[:f.pageMax]), true, nil
	}
	return slices.Clone(tail), false, nil
}

// recSink records what Start delivers.
type recSink struct {
	mu      sync.Mutex
	events  []*Event
	idles   int
	failOn  int // Deliver fails on this call (1-based); 0 never
	calls   int
	idleErr error
}

func (r *recSink) Deliver(batch []*Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.failOn == r.calls {
		return fmt.Errorf("sink: broken pipe")
	}
	r.events = append(r.events, batch...)
	return nil
}

func (r *recSink) Idle() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.idles++
	return r.idleErr
}

func (r *recSink) got() []*Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

func (r *recSink) idleCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.idles
}

// describe renders events compactly for failure messages: "t:3-0", "reset(t history-lost oldest=null)".
func describe(evs []*Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		if ev.Type == "reset" {
			out[i] = "reset" + string(ev.Data)
		} else if ev.Stored() {
			out[i] = ev.Topic + ":" + ev.IDText
		} else {
			out[i] = ev.Topic + ":ephemeral"
		}
	}
	return out
}

func ids(topic string, from, to uint64) []string {
	var out []string
	for n := from; n <= to; n++ {
		out = append(out, fmt.Sprintf("%s:%d-0", topic, n))
	}
	return out
}

// drainAccepted takes what is queued for s now and keeps what Advance does not report as a duplicate, as a
// consumer does.
func drainAccepted(s *Subscription) []*Event {
	var out []*Event
	for _, ev := range s.Take(nil, s.queued()) {
		if !s.Advance(ev) {
			out = append(out, ev)
		}
	}
	return out
}

func isDone(s *Subscription) bool {
	select {
	case <-s.Done():
		return true
	default:
		return false
	}
}

func (f *fakeStore) Newest(ctx context.Context, topic string) (ID, error) {
	evs, _, err := f.Tail(ctx, topic, 1)
	if err != nil || len(evs) == 0 {
		return ID{}, err
	}
	return evs[0].ID, nil
}
