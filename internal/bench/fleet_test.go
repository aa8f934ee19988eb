package bench

import (
	"testing"
)

// keySlot must agree with Redis: CLUSTER KEYSLOT gives these (the second is the spec's CRC16 check value).
func TestKeySlot(t *testing.T) {
	for _, c := range []struct {
		key  string
		want int
	}{
		{"foo", 12182},
		{"123456789", 12739},
		{"hub:{project.42}:events", keySlot("project.42")},
		{"{user1000}.following", keySlot("user1000")},
		{"foo{}{bar}", keySlot("foo{}{bar}")}, // an empty tag: the whole key
		{"foo{{bar}}zap", keySlot("{bar")},
	} {
		if got := keySlot(c.key); got != c.want {
			t.Errorf("keySlot(%q) = %d, want %d", c.key, got, c.want)
		}
	}
	if keySlot("foo{}{bar}") == keySlot("bar") {
		t.Errorf("keySlot(foo{}{bar}) hashed the second tag; Redis hashes the whole key when the first tag is empty")
	}
}

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
