package sse

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// engine is what the raw streams share (stream_raw.go): the registry, the work queue and its workers, the wheel, and
// the count of their goroutines that Shutdown waits for. It runs only while a raw stream is open.
type engine struct {
	wg         sync.WaitGroup // raw streams and their goroutines, the heartbeat wheel and the workers
	reg        registry
	work       chan *rawStream // raw streams woken and waiting for a worker
	helpers    atomic.Int32    // extra workers running (see helpWhenBacklogged)
	maxHelpers int             // GOMAXPROCS when the handler was made: runtime.GOMAXPROCS takes a global lock
	ctx        context.Context // for the store reads of raw streams; cancelled by Shutdown
	cancel     context.CancelFunc
}

// workQueue bounds the raw streams waiting for a worker; a wake beyond it runs the stream on its own goroutine.
const workQueue = 1 << 14

func newEngine() engine {
	ctx, cancel := context.WithCancel(context.Background())
	return engine{ctx: ctx, cancel: cancel, work: make(chan *rawStream, workQueue), maxHelpers: runtime.GOMAXPROCS(0)}
}

// registry holds the handler's raw streams in the heartbeat wheel, which also lists them to cut them all at a
// shutdown that runs out of time. While it is not empty, the wheel's goroutine and the workers run.
type registry struct {
	mu     sync.Mutex
	wheel  wheel         // every raw stream, by when each may next be due a heartbeat
	stop   chan struct{} // closed when the wheel becomes empty: its goroutine ends; nil while none runs
	leaver *leaver       // of this run of the wheel, which closes it
}

// track lists d; the caller has counted it in h.wg already, before the hijack (see ServeHTTP). It reports whether
// the wheel watches d's connection for the client leaving.
func (h *Handler) track(d *rawStream) bool {
	r := &h.reg
	r.mu.Lock()
	if r.stop == nil { // the first raw stream: start the wheel and the workers
		r.stop, r.leaver = make(chan struct{}), newLeaver()
		r.wheel = newWheel(h.cfg.Heartbeat, mono(time.Now()))
		n := runtime.GOMAXPROCS(0)
		h.wg.Add(1 + n)
		go h.beat(r.stop, r.leaver)
		for range n {
			go h.worker(r.stop)
		}
	}
	r.wheel.add(d)
	lv := r.leaver
	r.mu.Unlock()
	return lv.add(d)
}

func (h *Handler) untrack(d *rawStream) {
	r := &h.reg
	r.mu.Lock()
	defer r.mu.Unlock()
	if d.lv != nil {
		d.lv.remove(d)
	}
	if r.wheel.remove(d) == 0 {
		close(r.stop)
		r.stop = nil
	}
}

// worker runs the raw streams that wakes queue, until no raw stream is left.
func (h *Handler) worker(stop <-chan struct{}) {
	defer h.wg.Done()
	for {
		select {
		case d := <-h.work:
			d.run()
		case <-stop:
			return
		}
	}
}

// A backlog of woken streams calls in helpers: extra workers that end once the queue is empty. They keep the hub's
// writing its fair share of the scheduler when many other goroutines are runnable (handlers replaying after a
// reconnect storm): Go schedules goroutines, not work. Few of them: a backlog is also what makes batches, and at
// 10,000 streams 64 helpers instead of 2 made writes smaller and p99 latency 4 times worse (BENCHMARKS.md).
const backlog = 32 // queued streams per helper

func (h *Handler) helpWhenBacklogged() {
	n := h.helpers.Load()
	if len(h.work) <= backlog*int(n+1) || int(n) >= h.maxHelpers || !h.helpers.CompareAndSwap(n, n+1) {
		return
	}
	h.wg.Add(1) // a woken stream is counted until its finish, so this never races Wait at zero
	go h.help()
}

func (h *Handler) help() {
	defer h.wg.Done()
	defer h.helpers.Add(-1)
	for {
		select {
		case d := <-h.work:
			d.run()
		default:
			return
		}
	}
}
