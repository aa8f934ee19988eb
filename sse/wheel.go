package sse

import (
	"context"
	"runtime"
	"sync"
	"time"
)

// registry is the handler's list of detached streams: for the heartbeat wheel, and to cut them all at a shutdown
// that runs out of time. While it is not empty, the wheel and the workers run.
type registry struct {
	mu      sync.Mutex
	streams []*detached
	stop    chan struct{} // closed when the list becomes empty: the wheel's goroutine ends; nil while none runs
	leaver  *leaver       // of this run of the wheel, which closes it
}

// track lists d; the caller has counted it in h.wg already, before the hijack (see ServeHTTP). It reports whether
// the wheel watches d's connection for the client leaving.
func (h *Handler) track(d *detached) bool {
	r := &h.reg
	r.mu.Lock()
	d.slot = len(r.streams)
	r.streams = append(r.streams, d)
	if r.stop == nil { // the first detached stream: start the wheel and the workers
		r.stop, r.leaver = make(chan struct{}), newLeaver()
		n := runtime.GOMAXPROCS(0)
		h.wg.Add(1 + n)
		go h.beat(r.stop, r.leaver)
		for range n {
			go h.worker(r.stop)
		}
	}
	lv := r.leaver
	r.mu.Unlock()
	return lv.add(d)
}

func (h *Handler) untrack(d *detached) {
	r := &h.reg
	r.mu.Lock()
	defer r.mu.Unlock()
	if d.lv != nil {
		d.lv.remove(d)
	}
	last := len(r.streams) - 1
	moved := r.streams[last]
	r.streams[d.slot], moved.slot = moved, d.slot
	r.streams[last] = nil
	r.streams = r.streams[:last]
	if last == 0 {
		close(r.stop)
		r.stop = nil
	}
}

// worker runs the detached streams that wakes queue, until no detached stream is left.
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

// beatEvery is how often the wheel looks for silent streams. It marks a stream once it has been silent for
// Heartbeat minus one tick, so the heartbeat goes out between Heartbeat-beatEvery and Heartbeat after the last
// write: no stream is silent for longer than Heartbeat (for 15 s: between 14.77 and 15 s).
func beatEvery(hb time.Duration) time.Duration {
	return min(max(hb/64, time.Millisecond), 250*time.Millisecond)
}

// beat is the heartbeat wheel: one goroutine for all detached streams, instead of a timer per stream. Each tick it
// marks the streams due for a heartbeat and wakes them; the run writes the comment. Between ticks it waits on the
// leaver for clients that leave. It ends when no detached stream is left (track starts another).
func (h *Handler) beat(stop <-chan struct{}, lv *leaver) {
	defer h.wg.Done()
	every := beatEvery(h.cfg.Heartbeat)
	after := int64(h.cfg.Heartbeat - every)
	var tick *time.Ticker
	if lv == nil {
		tick = time.NewTicker(every)
		defer tick.Stop()
	} else {
		defer lv.close()
	}
	var due []*detached
	r := &h.reg
	next := time.Now().Add(every)
	for {
		if lv != nil {
			lv.wait(min(time.Until(next), 50*time.Millisecond)) // and look at stop that often
			select {
			case <-stop:
				return
			default:
			}
			if time.Now().Before(next) {
				continue
			}
			next = time.Now().Add(every)
		} else {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
		now := mono(time.Now())
		r.mu.Lock()
		for _, d := range r.streams {
			if now-d.c.lastWrite.Load() >= after && !d.due.Load() {
				d.due.Store(true)
				due = append(due, d)
			}
		}
		r.mu.Unlock()
		for i, d := range due {
			d.wake()
			due[i] = nil
		}
		due = due[:0]
	}
}

// Shutdown waits until every detached stream has ended; streams served by net/http are the HTTP server's to wait
// for. Streams end when their subscriptions do, so close the hub first. If ctx ends first, Shutdown cuts the
// connections left, waits for their goroutines and returns ctx's error.
func (h *Handler) Shutdown(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		h.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		h.cancel()
		return nil
	case <-ctx.Done():
	}
	h.cancel()
	h.reg.mu.Lock()
	cut := append([]*detached(nil), h.reg.streams...)
	h.reg.mu.Unlock()
	for _, d := range cut {
		_ = d.nc.Close() // ends a write in progress
		d.c.sub.Close()  // wakes an idle stream to finish
	}
	<-done
	return ctx.Err()
}
