package pubsub

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Snapshot is a topic's current state: the latest envelope per workflow and per lock, consistent with Cursor (the
// id of the last event it reflects; "0-0" for a topic without events). Opening /events from Cursor continues it
// with nothing missed and nothing twice.
type Snapshot struct {
	Topic     string                     `json:"topic"`
	Cursor    string                     `json:"cursor"`
	Workflows map[string]json.RawMessage `json:"workflows"`
	Locks     map[string]json.RawMessage `json:"locks"`
	// Health holds the hub's latest verdict (a health event) per workflow that had one.
	Health map[string]json.RawMessage `json:"health"`
}

// Snapshot reads the topic's state hash, which the publish script keeps in step with the stream.
func (s *History) Snapshot(ctx context.Context, topic string) (*Snapshot, error) {
	h, err := s.rdb.HGetAll(ctx, s.keys.State(topic)).Result()
	if err != nil {
		return nil, fmt.Errorf("snapshot of %s: %w", topic, err)
	}
	snap := &Snapshot{Topic: topic, Cursor: "0-0", Workflows: map[string]json.RawMessage{}, Locks: map[string]json.RawMessage{},
		Health: map[string]json.RawMessage{}}
	for k, v := range h {
		var into map[string]json.RawMessage
		name, ok := strings.CutPrefix(k, fieldWorkflow)
		if ok {
			into = snap.Workflows
		} else if name, ok = strings.CutPrefix(k, fieldLock); ok {
			into = snap.Locks
		} else if name, ok = strings.CutPrefix(k, fieldVerdict); ok {
			into = snap.Health
		}
		switch {
		case k == fieldCursor:
			snap.Cursor = v
		case into == nil: // the health sweeper's own fields
		case !json.Valid([]byte(v)):
			s.drop(topic, k, dropInvalidJSON)
		default:
			into[name] = json.RawMessage(v)
		}
	}
	return snap, nil
}
