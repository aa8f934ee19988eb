//go:build slow

package lease_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/lease"
)

// On a cluster the script and its WAIT go to the master of the key's slot, for keys on every master: each grant is
// on that master's replica when it returns, and asking for more replicas than a master has undoes the grant.
func TestMinReplicasOnACluster(t *testing.T) {
	c := rig.StartCluster(t, 3, 1, time.Second)
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	defer rdb.Close()
	ctx := context.Background()
	prefix := rig.Prefix(t) + ":lease:"
	one := newLocker(t, rdb, lease.Options{TTL: 5 * time.Second, Prefix: prefix, Holder: t.Name(), MinReplicas: 1})
	two := newLocker(t, rdb, lease.Options{TTL: 5 * time.Second, Prefix: prefix, Holder: t.Name(), MinReplicas: 2,
		ReplicaTimeout: 100 * time.Millisecond})
	masters := map[string]bool{}
	for i := 0; i < 50 && len(masters) < 3; i++ {
		key := fmt.Sprintf("k%d", i)
		var master, replica *rig.Redis
		rig.Eventually(t, 30*time.Second, "the master of "+key+" and its replica are known", func() bool {
			master, replica = c.MasterOf(prefix + "{" + key + "}")
			return master != nil && replica != nil
		})
		if masters[master.Addr] {
			continue
		}
		masters[master.Addr] = true
		ls, err := one.TryAcquire(ctx, key)
		if err != nil {
			t.Fatalf("MinReplicas 1: TryAcquire(%s) on %s = %v", key, master.Addr, err)
		}
		// A replica answers reads of its own slots only with READONLY; the data is its own copy.
		rc := redis.NewClient(&redis.Options{Addr: replica.Addr, OnConnect: func(ctx context.Context, cn *redis.Conn) error {
			return cn.ReadOnly(ctx).Err()
		}})
		n, err := rc.Exists(ctx, prefix+"{"+key+"}").Result()
		_ = rc.Close()
		if err != nil || n != 1 {
			t.Fatalf("replica %s of %s: EXISTS lease key = %d, %v as TryAcquire returned; want 1", replica.Addr, master.Addr, n, err)
		}
		_ = ls.Release(ctx)
		if _, err := two.TryAcquire(ctx, key); !errors.Is(err, lease.ErrUnreplicated) || !strings.Contains(err.Error(), "1 of 2") {
			t.Fatalf("MinReplicas 2 with one replica: TryAcquire(%s) = %v, want ErrUnreplicated with 1 of 2", key, err)
		}
	}
	if len(masters) < 3 {
		t.Fatalf("keys landed on %d masters, want 3", len(masters))
	}
}
