package lease_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/lease"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// recorder is an Announcer that keeps the lock events it is given.
type recorder struct {
	mu     sync.Mutex
	events []lease.Event
	topics []string
}

func (r *recorder) Publish(_ context.Context, topic, eventType string, data []byte) (string, error) {
	var ev lease.Event
	if eventType != lease.EventType {
		return "", errors.New("unexpected event type " + eventType)
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		return "", err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
	r.topics = append(r.topics, topic)
	return "1-0", nil
}

func (r *recorder) states() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var s []string
	for _, ev := range r.events {
		s = append(s, ev.State)
	}
	return s
}

func (r *recorder) has(state string) bool {
	for _, s := range r.states() {
		if s == state {
			return true
		}
	}
	return false
}

// setup returns a client on a fresh server (real when installed) and options with a unique prefix and short times.
func setup(t *testing.T) (*redis.Client, lease.Options) {
	t.Helper()
	srv := rig.StartRedis(t)
	return srv.Client(), lease.Options{
		TTL: 300 * time.Millisecond, Prefix: rig.Prefix(t) + ":lease:", Holder: t.Name(),
	}
}

// newLocker returns a Locker closed when the test ends.
func newLocker(t *testing.T, c redis.UniversalClient, o lease.Options) *lease.Locker {
	t.Helper()
	l := lease.New(c, o)
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
