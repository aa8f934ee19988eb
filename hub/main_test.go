package hub

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Start calls Sink.Idle this often while it waits; tests that watch it should not wait a second.
	idleEvery = 10 * time.Millisecond
	goleak.VerifyTestMain(m)
}
