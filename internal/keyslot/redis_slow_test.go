//go:build slow

package keyslot_test

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/internal/keyslot"
	"github.com/syncverse/hub/internal/rig"
)

// Of agrees with a real Redis's CLUSTER KEYSLOT (a cluster-enabled redis-server answers it).
func TestOfAgreesWithRedis(t *testing.T) {
	c := rig.StartCluster(t, 3, 0, 2*time.Second)
	rdb := redis.NewClient(&redis.Options{Addr: c.Addrs()[0]})
	defer rdb.Close()
	for _, k := range []string{"foo", "hub:{project.42}:events", "x", "{}", "{a", "a{}b", "{user1000}.following", strings.Repeat("z", 128)} {
		want, err := rdb.ClusterKeySlot(t.Context(), k).Result()
		if err != nil {
			t.Fatalf("CLUSTER KEYSLOT %s: %v", k, err)
		}
		if got := keyslot.Of(k); int64(got) != want {
			t.Errorf("Of(%q) = %d, CLUSTER KEYSLOT says %d", k, got, want)
		}
	}
}
