package keyslot_test

import (
	"testing"

	"github.com/syncverse/hub/internal/keyslot"
)

// Of agrees with the spec's check values and hash-tag rules.
func TestOfHashTags(t *testing.T) {
	for _, c := range []struct {
		key  string
		want int
	}{
		{"foo", 12182},       // CLUSTER KEYSLOT foo
		{"123456789", 12739}, // the spec's CRC16 check value, 0x31C3, mod 16384
		{"hub:{project.42}:events", keyslot.Of("project.42")},
		{"{user1000}.following", keyslot.Of("user1000")},
		{"foo{}{bar}", keyslot.Of("foo{}{bar}")}, // an empty tag: the whole key
		{"foo{{bar}}zap", keyslot.Of("{bar")},
	} {
		if got := keyslot.Of(c.key); got != c.want {
			t.Errorf("Of(%q) = %d, want %d", c.key, got, c.want)
		}
	}
	if keyslot.Of("foo{}{bar}") == keyslot.Of("bar") {
		t.Errorf("Of(foo{}{bar}) hashed the second tag; Redis hashes the whole key when the first tag is empty")
	}
}
