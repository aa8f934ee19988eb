// Package hubtest is the in-memory hub.Store of the tests of the hub's consumers (sse and the edge): one copy, so
// what a store promises (ids in order, Prev the id before, reads after a position) is written once. hub's own tests
// keep a store of their own: they are in package hub, which this package imports.
package hubtest

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/syncverse/hub/hub"
)

// Store is an in-memory hub.Store: ids of a topic are 1-0, 2-0, ... and each Prev is the id before. Its events
// come as live ones (hub.SourceLive). Safe for concurrent use.
type Store struct {
	mu      sync.Mutex
	streams map[string][]*hub.Event
	hold    map[string]chan struct{} // topics whose Follow waits for release
	gates   map[string]gate          // topics whose reads past a position wait for the gate to open
}

// gate holds reads of a topic past a position.
type gate struct {
	after hub.ID
	open  chan struct{}
}

// NewStore returns an empty store whose topics follow at once.
func NewStore() *Store {
	return &Store{streams: map[string][]*hub.Event{}, hold: map[string]chan struct{}{}, gates: map[string]gate{}}
}

// Add stores n events of topic, whose data names the topic and the event's number, and returns them.
func (m *Store) Add(topic string, n int) []*hub.Event {
	var out []*hub.Event
	for range n {
		out = append(out, m.AddData(topic, func(n uint64) []byte { return fmt.Appendf(nil, `{"topic":%q,"n":%d}`, topic, n) }))
	}
	return out
}

// AddData stores one event of topic with data(its number) and returns it.
func (m *Store) AddData(topic string, data func(n uint64) []byte) *hub.Event {
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

// Hold makes the next Follows of topic wait until Release.
func (m *Store) Hold(topic string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.hold[topic] = make(chan struct{})
}

// Release lets the Follows of a held topic complete.
func (m *Store) Release(topic string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	close(m.hold[topic])
}

// GateReads makes reads of topic after position after (or later) wait until the returned function is called.
func (m *Store) GateReads(topic string, after hub.ID) (open func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	g := gate{after: after, open: make(chan struct{})}
	m.gates[topic] = g
	var once sync.Once
	return func() { once.Do(func() { close(g.open) }) }
}

// Follow is ready at once, unless the topic is held.
func (m *Store) Follow(topic string) <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ch := m.hold[topic]; ch != nil {
		return ch
	}
	ch := make(chan struct{})
	close(ch)
	return ch
}

// Unfollow does nothing: the store keeps no subscriptions.
func (m *Store) Unfollow(string) {}

// Read returns up to limit events after the position, and whether limit were found (more may follow).
func (m *Store) Read(ctx context.Context, topic string, after hub.ID, limit int) ([]*hub.Event, bool, error) {
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

// Tail returns the newest n events.
func (m *Store) Tail(_ context.Context, topic string, n int) ([]*hub.Event, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.streams[topic]
	return slices.Clone(s[max(0, len(s)-n):]), false, nil
}

// Newest is the id of the newest event, zero for an empty topic.
func (m *Store) Newest(ctx context.Context, topic string) (hub.ID, error) {
	evs, _, err := m.Tail(ctx, topic, 1)
	if err != nil || len(evs) == 0 {
		return hub.ID{}, err
	}
	return evs[0].ID, nil
}

var _ hub.Store = (*Store)(nil)
