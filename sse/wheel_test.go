package sse

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestWheelMarksEachSilentStreamInTimeAndLooksRarely drives the wheel on a clock of its own: 2,000 streams, some
// written to at random moments, others silent, one in ten leaving and another arriving each second. Every stream
// silent for Heartbeat less a tick is marked at that tick, never later, and none earlier,
// and the wheel looks at each stream about once a period (a walk of every stream each tick would look 64 times).
func TestWheelMarksEachSilentStreamInTimeAndLooksRarely(t *testing.T) {
	const hb = 15 * time.Second
	rng := rand.New(rand.NewPCG(1, 2))
	w := newWheel(hb, 0)
	every := int64(beatEvery(hb))
	var live []*rawStream
	add := func(now int64) {
		d := &rawStream{}
		d.lastWrite.Store(now)
		w.add(d)
		live = append(live, d)
	}
	for range 2000 {
		add(0)
	}
	var looks, periods int64
	var due []*rawStream
	end := int64(2 * time.Minute)
	for now := every; now <= end; now += every {
		if now%int64(time.Second) < every { // each second, 200 leave and 200 arrive
			for range 200 {
				i := rng.IntN(len(live))
				w.remove(live[i])
				live[i] = live[len(live)-1]
				live = live[:len(live)-1]
				add(now)
			}
		}
		for _, d := range live[:len(live)/2] { // the first half gets events now and then
			if rng.IntN(100) == 0 {
				d.lastWrite.Store(now)
			}
		}
		looks += int64(len(w.slots[int((now/every)%int64(len(w.slots)))]))
		due = w.turn(now, due[:0])
		for _, d := range due {
			if silent := now - d.lastWrite.Load(); silent < int64(hb)-every || silent >= int64(hb) {
				t.Fatalf("at %v a stream silent for %v was marked; want at least %v and less than %v",
					time.Duration(now), time.Duration(silent), hb-time.Duration(every), hb)
			}
			d.due.Store(false) // its run writes the heartbeat
			d.lastWrite.Store(now)
		}
		for _, d := range live { // an unmarked stream will be looked at again before it is silent for a period
			if silent := now - d.lastWrite.Load(); silent >= int64(hb)-every {
				t.Fatalf("at %v an unmarked stream has been silent for %v; it is due at %v", time.Duration(now),
					time.Duration(silent), hb-time.Duration(every))
			}
		}
		periods++
	}
	ticksPerPeriod := int64(hb) / every
	perStreamPeriod := float64(looks) / float64(len(live)) / (float64(periods) / float64(ticksPerPeriod))
	if perStreamPeriod > 3 {
		t.Errorf("the wheel looked at each stream %.1f times a heartbeat period; want about once or twice", perStreamPeriod)
	}
	t.Logf("looks per stream and heartbeat period: %.2f", perStreamPeriod)
}

// TestWheelCatchesUpAfterAStall: a wheel that did not turn for longer than its ring (a stopped process) turns
// once, keeps every stream, and marks all the silent ones.
func TestWheelCatchesUpAfterAStall(t *testing.T) {
	const hb = time.Second
	w := newWheel(hb, 0)
	for i := range 100 {
		d := &rawStream{}
		d.lastWrite.Store(int64(i) * int64(time.Millisecond))
		w.add(d)
	}
	due := w.turn(int64(10*time.Second), nil)
	if len(due) != 100 {
		t.Fatalf("after a 10 s stall, %d of 100 silent streams were marked", len(due))
	}
	if n := len(w.all()); n != 100 || w.n != 100 {
		t.Fatalf("the wheel holds %d streams after the stall (counts %d); want 100", n, w.n)
	}
}
