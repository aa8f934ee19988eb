package rig

import (
	"errors"
	"fmt"
	"os"
	"sync"
)

// TB is what a rig needs of its owner: a *testing.T or *testing.B in tests, an Owner elsewhere (dispatch-test
// --failover starts its Redis rigs through this package too).
type TB interface {
	Helper()
	Cleanup(func())
	TempDir() string
	Fatalf(format string, args ...any)
	Skip(args ...any)
	Skipf(format string, args ...any)
}

// Owner owns rigs outside a test. Do runs a function that starts them: a failure that would end a test (Fatalf, or
// Skip for a missing redis-server) ends Do with an error instead. Close stops everything started, newest first.
type Owner struct {
	mu       sync.Mutex
	cleanups []func()
}

// ownerFailure carries a Fatalf or Skip from the rig's code to Do, as runtime.Goexit carries it to a test.
type ownerFailure struct{ err error }

// ErrNoRedis is the error of a Do whose rig needs redis-server or redis-cli and did not find it.
var ErrNoRedis = errors.New("redis-server or redis-cli not installed")

// Do runs start and returns the failure it reported, if any. Call it from one goroutine at a time.
func (o *Owner) Do(start func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(ownerFailure)
			if !ok {
				panic(r)
			}
			err = f.err
		}
	}()
	start()
	return nil
}

// Close runs the cleanups, newest first. It is idempotent.
func (o *Owner) Close() {
	o.mu.Lock()
	c := o.cleanups
	o.cleanups = nil
	o.mu.Unlock()
	for i := len(c) - 1; i >= 0; i-- {
		c[i]()
	}
}

func (o *Owner) Helper() {}

func (o *Owner) Cleanup(f func()) {
	o.mu.Lock()
	o.cleanups = append(o.cleanups, f)
	o.mu.Unlock()
}

func (o *Owner) TempDir() string {
	dir, err := os.MkdirTemp("", "rig-")
	if err != nil {
		o.Fatalf("temp dir: %v", err)
	}
	o.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

func (o *Owner) Fatalf(format string, args ...any) { panic(ownerFailure{fmt.Errorf(format, args...)}) }

func (o *Owner) Skip(args ...any) {
	panic(ownerFailure{fmt.Errorf("%w: %s", ErrNoRedis, fmt.Sprint(args...))})
}

func (o *Owner) Skipf(format string, args ...any) {
	panic(ownerFailure{fmt.Errorf("%w: %s", ErrNoRedis, fmt.Sprintf(format, args...))})
}
