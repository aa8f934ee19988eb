package sse

import "time"

// beatEvery is how often the wheel looks for silent streams. It marks a stream once it has been silent for
// Heartbeat minus one tick, so the heartbeat goes out between Heartbeat-beatEvery and Heartbeat after the last
// write: no stream is silent for longer than Heartbeat (for 15 s: between 14.77 and 15 s).
func beatEvery(hb time.Duration) time.Duration {
	return min(max(hb/64, time.Millisecond), 250*time.Millisecond)
}

// wheel holds the raw streams by the tick at which each may next be silent long enough for a heartbeat: a tick
// looks at its own slot's streams alone, so each stream is looked at about once per heartbeat period, not once
// per tick (at 10,000 streams, 680 looks a second instead of 43,000). A stream written to since it was placed is
// placed again by its last write. Guarded by the registry's lock.
type wheel struct {
	every int64 // a tick, in ns of mono
	after int64 // silence, in ns, past which a stream is due (Heartbeat less a tick)
	slots [][]*rawStream
	next  int64 // the first tick not yet turned
	n     int   // streams held
}

func newWheel(hb time.Duration, now int64) wheel {
	every := int64(beatEvery(hb))
	after := int64(hb) - every
	// A stream is placed at most after/every+2 ticks past the tick turning: the ring holds that and one more.
	return wheel{every: every, after: after, slots: make([][]*rawStream, after/every+4), next: now / every}
}

// place puts d in the slot of the first tick at or after its last write plus after: no earlier than the next tick
// to turn and, should the wheel be running late, no later than the ring allows (a stream looked at early is
// placed again).
func (w *wheel) place(d *rawStream) {
	t := (d.lastWrite.Load() + w.after + w.every - 1) / w.every
	t = min(max(t, w.next), w.next+int64(len(w.slots))-2)
	i := int(t % int64(len(w.slots)))
	d.wslot, d.wpos = i, len(w.slots[i])
	w.slots[i] = append(w.slots[i], d)
}

// add holds a new stream.
func (w *wheel) add(d *rawStream) {
	w.n++
	w.place(d)
}

// remove takes d out of its slot and returns how many streams are left.
func (w *wheel) remove(d *rawStream) int {
	s := w.slots[d.wslot]
	last := len(s) - 1
	moved := s[last]
	s[d.wpos], moved.wpos = moved, d.wpos
	s[last] = nil
	w.slots[d.wslot] = s[:last]
	w.n--
	return w.n
}

// all lists every stream held.
func (w *wheel) all() []*rawStream {
	out := make([]*rawStream, 0, w.n)
	for _, s := range w.slots {
		out = append(out, s...)
	}
	return out
}

// turn turns every tick up to now's (a ring's worth at most): it marks and appends to due the streams of each
// tick's slot that have been silent long enough, and places every one of them again (one marked is looked at
// again the next tick, unless its heartbeat has been written by then).
func (w *wheel) turn(now int64, due []*rawStream) []*rawStream {
	w.next = max(w.next, now/w.every-int64(len(w.slots))+1)
	for w.next <= now/w.every {
		i := int(w.next % int64(len(w.slots)))
		s := w.slots[i]
		w.slots[i] = nil
		w.next++ // the streams go to later ticks, never back into this one
		for j, d := range s {
			if now-d.lastWrite.Load() >= w.after && !d.due.Load() {
				d.due.Store(true)
				due = append(due, d)
			}
			w.place(d)
			s[j] = nil
		}
		w.slots[i] = s[:0] // its array, for the ring's next turn
	}
	return due
}

// beat is the heartbeat wheel's goroutine: one for all raw streams, instead of a timer per stream. Each tick it
// marks the streams due for a heartbeat and wakes them; the run writes the comment. Between ticks it waits on the
// leaver for clients that leave. It ends when no raw stream is left (track starts another).
func (h *Handler) beat(stop <-chan struct{}, lv *leaver) {
	defer h.wg.Done()
	every := beatEvery(h.cfg.Heartbeat)
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
		r.mu.Lock()
		due = r.wheel.turn(mono(time.Now()), due)
		r.mu.Unlock()
		for i, d := range due {
			d.wake()
			due[i] = nil
		}
		due = due[:0]
	}
}
