package testutil

import (
	"context"
	"testing"
	"time"

	"github.com/syncverse/hub/internal/rig"
)

// Eventually polls cond until it holds, and fails the test with what when within passes first.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	if err := rig.Poll(context.Background(), within, 2*time.Millisecond, what, cond); err != nil {
		t.Fatal(err)
	}
}
