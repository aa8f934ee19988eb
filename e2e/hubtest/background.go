package hubtest

import (
	"context"
	"errors"
	"testing"
	"time"
)

// background is one run of the program in a goroutine: cancel ends it, done carries what it returned.
type background struct {
	cancel context.CancelFunc
	done   chan error
}

// goRun starts run in a goroutine, with a context that stop cancels.
func goRun(run func(ctx context.Context) error) background {
	ctx, cancel := context.WithCancel(context.Background())
	b := background{cancel: cancel, done: make(chan error, 1)}
	go func() { b.done <- run(ctx) }()
	return b
}

// returned is for a caller that read done itself: the run is over, and stop has nothing left to wait for.
func (b *background) returned() {
	b.cancel()
	b.cancel = nil
}

// stop cancels the run and returns what it returned, waiting at most within; once stopped, stop returns nil.
func (b *background) stop(t testing.TB, within time.Duration) error {
	t.Helper()
	if b.cancel == nil {
		return nil
	}
	b.returned()
	select {
	case err := <-b.done:
		return err
	case <-time.After(within):
		t.Errorf("the program did not return within %v of its context's end", within)
		return errors.New("the program did not return")
	}
}
