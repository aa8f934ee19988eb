package sse

import "time"

// beatEvery is how often the wheel looks for silent streams. It marks a stream once it has been silent for
// Heartbeat minus one tick, so the heartbeat goes out between Heartbeat-beatEvery and Heartbeat after the last
// write: no stream is silent for longer than Heartbeat (for 15 s: between 14.77 and 15 s).
func beatEvery(hb time.Duration) time.Duration {
	return min(max(hb/64, time.Millisecond), 250*time.Millisecond)
}

// beat is the heartbeat wheel: one goroutine for all raw streams, instead of a timer per stream. Each tick it
// marks the streams due for a heartbeat and wakes them; the run writes the comment. Between ticks it waits on the
// leaver for clients that leave. It ends when no raw stream is left (track starts another).
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
	var due []*rawStream
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
			if now-d.lastWrite.Load() >= after && !d.due.Load() {
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
