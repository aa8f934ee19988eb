package bench

import (
	"testing"
)

// The default number of hubs is 5 unless the streams, with a restarted hub's share moved to the others, do not
// fit under the descriptor limit of one process.
func TestFleetHubsFor(t *testing.T) {
	for _, c := range []struct {
		conns int
		limit uint64
		want  int
	}{
		{3000, 20000, 5},
		{76000, 20000, 5},  // 19,000 per hub while one of the five restarts
		{100000, 20000, 7}, // 16,667 per hub while one of the seven restarts; six would need 20,000
		{100000, 1 << 20, 5},
	} {
		if got := fleetHubsFor(c.conns, c.limit); got != c.want {
			t.Errorf("fleetHubsFor(%d, %d) = %d, want %d", c.conns, c.limit, got, c.want)
		}
	}
}
