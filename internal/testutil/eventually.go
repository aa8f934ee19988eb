package testutil

import (
	"testing"
	"time"
)

// Eventually polls cond until it holds, and fails the test with what when within passes first.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
		time.Sleep(2 * time.Millisecond) // a poll interval, not a wait: cond is what the test waits for
	}
}
