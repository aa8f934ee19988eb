package bench

import (
	"testing"
	"time"
)

// The progress line names the scenario, elapsed against what the options make expected, open connections,
// events published (against the target) and delivered, and violations so far.
func TestMeterLine(t *testing.T) {
	m := &meter{}
	for range 3 {
		m.opened()
	}
	for range 120 {
		m.published()
	}
	for range 12345 {
		m.delivered()
	}
	m.violation()
	for _, c := range []struct {
		o    options
		want string
	}{
		{options{scenario: "fanout", conns: 3, events: 2000, rate: 200},
			"fanout 0:04 / ~0:10  conns 3/3  published 120/2000  delivered 12.3k  violations 1"},
		{options{scenario: "idle", conns: 10, hold: 30 * time.Second},
			"idle 0:04 / ~0:30  conns 3/10  published 120  delivered 12.3k  violations 1"},
		{options{scenario: "publish", events: 100000},
			"publish 0:04  published 120/100000  delivered 12.3k  violations 1"},
		{options{scenario: "replay", conns: 1, replay: 1000, repeat: 5},
			"replay 0:04  conns 3/1  published 120/5000  delivered 12.3k  violations 1"},
	} {
		if got := m.line(&c.o, 4*time.Second); got != c.want {
			t.Errorf("line(%s) = %q\nwant %q", c.o.scenario, got, c.want)
		}
	}
	var none *meter // a load built without a run (the client tests') counts nothing
	none.opened()
	none.delivered()
}
