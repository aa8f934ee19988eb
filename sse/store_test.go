package sse

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/syncverse/hub/hub"
)

// memStore is an in-memory hub.Store: ids of a topic are 1-0, 2-0, ... and each Prev is the id before.
type memStore struct {
	mu      sync.Mutex
	streams map[string][]*hub.Event
	hold    map[string]chan struct{} // topics whose Follow waits for release
	gates   map[string]gate          // topics whose reads past a position wait for the gate to open
}

type gate struct {
	after hub.ID
	open  chan struct{}
}

func newMemStore() *memStore {
	return &memStore{streams: map[string][]*hub.Event{}, hold: map[string]chan struct{}{}, gates: map[string]gate{}}
}

// add stores n events of topic, whose data names the topic and the event's number, and returns them.
func (m *memStore) add(topic string, n int) []*hub.Event {
	var out []*hub.Event
	for range n {
		out = append(out, m.addData(topic, func(n uint64) []byte { return fmt.Appendf(nil, `{"topic":%q,"n":%d}`, topic, n) }))
	}
	return out
}

// addData stores one event of topic with data(its number) and returns it.
func (m *memStore) addData(topic string, data func(n uint64) []byte) *hub.Event {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.streams[topic]
	var prev hub.ID
	if len(s) > 0 {
		prev = s[len(s)-1].ID
	}
	id := hub.ID{Ms: uint64(len(s) + 1)}
	ev := &hub.Event{Topic: topic, ID: id, IDText: id.String(), Prev: prev, Type: "progress", Data: data(id.Ms),
		Source: hub.SourceLive}
	m.streams[topic] = append(s, ev)
	return ev
}

func (m *memStore) holdTopic(topic string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.hold[topic] = make(chan struct{})
}

func (m *memStore) release(topic string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	close(m.hold[topic])
}

// gateReads makes reads of topic after position after (or later) wait until the returned function is called.
func (m *memStore) gateReads(topic string, after hub.ID) (open func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	g := gate{after: after, open: make(chan struct{})}
	m.gates[topic] = g
	var once sync.Once
	return func() { once.Do(func() { close(g.open) }) }
}

func (m *memStore) Follow(topic string) <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ch := m.hold[topic]; ch != nil {
		return ch
	}
	ch := make(chan struct{})
	close(ch)
	return ch
}

func (m *memStore) Unfollow(string) {}

func (m *memStore) Read(ctx context.Context, topic string, after hub.ID, limit int) ([]*hub.Event, bool, error) {
	m.mu.Lock()
	g, gated := m.gates[topic]
	m.mu.Unlock()
	if gated && !after.Less(g.after) {
		select {
		case <-g.open:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*hub.Event
	for _, ev := range m.streams[topic] {
		if after.Less(ev.ID) && len(out) < limit {
			out = append(out, ev)
		}
	}
	return out, len(out) == limit, nil
}

func (m *memStore) Tail(_ context.Context, topic string, n int) ([]*hub.Event, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.streams[topic]
	return slices.Clone(s[max(0, len(s)-n):]), false, nil
}

func (m *memStore) Newest(ctx context.Context, topic string) (hub.ID, error) {
	evs, _, err := m.Tail(ctx, topic, 1)
	if err != nil || len(evs) == 0 {
		return hub.ID{}, err
	}
	return evs[0].ID, nil
}
