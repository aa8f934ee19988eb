package delay

import (
	"context"
	"testing"
	"time"
)

func TestJitterStaysWithinItsBoundsAndSpreads(t *testing.T) {
	for _, c := range []struct{ lo, hi time.Duration }{{0, 1}, {1, 2}, {50, 150}, {time.Second / 2, time.Second}} {
		seen := map[bool]int{}
		for range 2000 {
			j := Jitter(c.lo, c.hi)
			if j < c.lo || j > c.hi {
				t.Fatalf("Jitter(%v, %v) = %v, outside the bounds", c.lo, c.hi, j)
			}
			seen[j <= c.lo+(c.hi-c.lo)/2]++
		}
		if seen[true] < 200 || seen[false] < 200 {
			t.Errorf("Jitter(%v, %v): %d draws in the lower half, %d in the upper; want both halves used", c.lo, c.hi, seen[true], seen[false])
		}
	}
	if j := Jitter(5, 5); j != 5 {
		t.Errorf("Jitter(5, 5) = %v, want 5", j)
	}
	if j := Jitter(5, 3); j != 5 {
		t.Errorf("Jitter(5, 3) = %v, want the lower bound 5", j)
	}
}

func TestSleepEndsWithItsContext(t *testing.T) {
	if !Sleep(context.Background(), time.Millisecond) {
		t.Error("Sleep of 1 ms with a live context reported it was cut short")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if Sleep(ctx, time.Hour) {
		t.Error("Sleep with an ended context reported it waited the whole hour")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Sleep with an ended context took %v", d)
	}
}
