// Package delay holds the hub's two ways of waiting: a random wait within bounds, so that clients or publishers
// interrupted together do not come back together, and a wait that ends early with its context.
package delay

import (
	"context"
	"math/rand/v2"
	"time"
)

// Jitter returns a uniformly random duration in [lo, hi]; lo when hi is not above it.
func Jitter(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + rand.N(hi-lo+1)
}

// Sleep waits d, or less when ctx ends first; it reports whether it waited the whole d.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
