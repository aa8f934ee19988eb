package pubsub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/hub"
)

// Snapshot is a topic's current state: the latest envelope per workflow and per lock, consistent with Cursor (the
// id of the last event it reflects; "0-0" for a topic without events). Opening /events from Cursor continues it
// with nothing missed and nothing twice. Truncated says the state did not fit in limits.max_snapshot_bytes: the
// snapshot holds only some of its workflows and locks (each whole); the others appear as they publish.
type Snapshot struct {
	Topic     string                     `json:"topic"`
	Cursor    string                     `json:"cursor"`
	Workflows map[string]json.RawMessage `json:"workflows"`
	Locks     map[string]json.RawMessage `json:"locks"`
	// Health holds the hub's latest verdict (a health event) per workflow that had one.
	Health map[string]json.RawMessage `json:"health"`
	// Starts holds the id of each workflow's first event (its time in milliseconds before the dash), so a client
	// that sees only the latest event knows when the workflow began.
	Starts    map[string]string `json:"starts"`
	Truncated bool              `json:"truncated,omitempty"`
}

// snapshotScan is the COUNT hint of each HSCAN: a few fields at a time, so a reply stays small however large they are.
const snapshotScan = 32

// Snapshot reads the topic's state hash, which the publish script keeps in step with the stream, a few fields at a
// time and at most MaxSnapshotBytes of them. The cursor is read first; a field the script rewrote since then
// reflects an event after the cursor and is left out, so what the snapshot holds is the state at its cursor and a
// client replaying from there gets that workflow's newer event.
func (s *History) Snapshot(ctx context.Context, topic string) (*Snapshot, error) {
	key := s.keys.State(topic)
	snap := &Snapshot{Topic: topic, Cursor: "0-0", Workflows: map[string]json.RawMessage{}, Locks: map[string]json.RawMessage{},
		Health: map[string]json.RawMessage{}, Starts: map[string]string{}}
	cur, err := s.rdb.HGet(ctx, key, fieldCursor).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return snap, nil
	case err != nil:
		return nil, fmt.Errorf("snapshot of %s: %w", topic, err)
	}
	snap.Cursor = cur
	cursor, _ := hub.ParseID(cur)
	used := 0
	for pos := uint64(0); ; {
		var fields []string
		if err := s.slot(ctx, func() (err error) {
			fields, pos, err = s.rdb.HScan(ctx, key, pos, "", snapshotScan).Result()
			return err
		}); err != nil {
			return nil, fmt.Errorf("snapshot of %s: %w", topic, err)
		}
		for i := 0; i+1 < len(fields); i += 2 {
			if used >= s.maxSnapshot {
				snap.Truncated = true
				s.snapsCut.Inc()
				return snap, nil
			}
			used += s.addField(snap, cursor, fields[i], fields[i+1])
		}
		if pos == 0 {
			return snap, nil
		}
	}
}

// addField puts one field of the state hash into snap and returns the bytes it added.
func (s *History) addField(snap *Snapshot, cursor hub.ID, k, v string) int {
	if name, ok := strings.CutPrefix(k, fieldStart); ok {
		if id, err := hub.ParseID(v); err != nil || cursor.Less(id) {
			return 0 // not an id, or written after the cursor was read
		}
		snap.Starts[name] = v
		return len(k) + len(v)
	}
	var into map[string]json.RawMessage
	name, ok := strings.CutPrefix(k, fieldWorkflow)
	if ok {
		into = snap.Workflows
	} else if name, ok = strings.CutPrefix(k, fieldLock); ok {
		into = snap.Locks
	} else if name, ok = strings.CutPrefix(k, fieldVerdict); ok {
		into = snap.Health
	} else {
		return 0 // _cursor, _trim and the health sweeper's own fields
	}
	if !json.Valid([]byte(v)) {
		s.drop(snap.Topic, k, dropInvalidJSON)
		return 0
	}
	var env struct {
		ID string `json:"id"`
	}
	if json.Unmarshal([]byte(v), &env) == nil {
		if id, err := hub.ParseID(env.ID); err == nil && cursor.Less(id) {
			return 0 // rewritten after the cursor was read
		}
	}
	into[name] = json.RawMessage(v)
	return len(k) + len(v)
}
