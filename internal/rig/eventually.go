package rig

import (
	"context"
	"testing"
	"time"
)

// Eventually polls cond until it holds, and fails the test with what when within passes first.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	if err := Poll(context.Background(), within, 2*time.Millisecond, what, cond); err != nil {
		t.Fatal(err)
	}
}
