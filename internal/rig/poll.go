package rig

import (
	"context"
	"fmt"
	"time"
)

// Poll calls cond every interval until it holds. It returns an error naming what when within passes first, or
// when ctx ends.
func Poll(ctx context.Context, within, every time.Duration, what string, cond func() bool) error {
	return PollWhy(ctx, within, every, what, func() (bool, string) { return cond(), "" })
}

// PollWhy is Poll with a cond that says why it does not hold yet; the error carries its last word.
func PollWhy(ctx context.Context, within, every time.Duration, what string, cond func() (ok bool, why string)) error {
	deadline := time.Now().Add(within)
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		ok, why := cond()
		if ok {
			return nil
		}
		if why != "" {
			why = " (" + why + ")"
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not within %v%s", what, within, why)
		}
		t.Reset(every)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w%s", what, ctx.Err(), why)
		case <-t.C:
		}
	}
}
