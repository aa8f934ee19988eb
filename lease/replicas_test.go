package lease_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/lease"
)

// slowReplica starts a master and a replica that replicates through a link holding every byte for delay, and
// returns clients of both once the replica is in sync.
func slowReplica(t *testing.T, delay time.Duration) (master, replica *redis.Client) {
	t.Helper()
	m := rig.StartRedisWith(t, rig.RedisOptions{Args: []string{"--repl-diskless-sync-delay", "0"}})
	link := rig.StartLink(t, m.Addr, delay)
	host, port, _ := net.SplitHostPort(link.Addr)
	r := rig.StartRedisWith(t, rig.RedisOptions{Args: []string{"--replicaof", host, port}})
	if err := rig.WaitInSync(r.Addr, "", 15*time.Second); err != nil {
		t.Fatal(err)
	}
	return m.Client(), r.Client()
}

// Without MinReplicas a grant returns before the replica has it: that is the window a failover falls into. With
// MinReplicas 1 the lease key, its fence and a guard's highest fence are on the replica when the call returns.
func TestMinReplicasGrantIsOnTheReplicaWhenItReturns(t *testing.T) {
	master, replica := slowReplica(t, 150*time.Millisecond)
	ctx := context.Background()
	for _, n := range []int{0, 1} {
		o := lease.Options{TTL: 5 * time.Second, Prefix: rig.Prefix(t) + ":lease:", Holder: t.Name(), MinReplicas: n}
		l := newLocker(t, master, o)
		ls, err := l.TryAcquire(ctx, "k")
		if err != nil {
			t.Fatalf("MinReplicas %d: TryAcquire = %v", n, err)
		}
		key, fence := o.Prefix+"{k}", o.Prefix+"{k}:fence"
		onReplica, _ := replica.Exists(ctx, key).Result()
		fenceThere, _ := replica.Get(ctx, fence).Result()
		guardKey := o.Prefix + "{k}:guard"
		if err := l.Guard(guardKey).Admit(ctx, ls.Fence()); err != nil {
			t.Fatalf("MinReplicas %d: Admit(%d) = %v", n, ls.Fence(), err)
		}
		guardThere, _ := replica.Get(ctx, guardKey).Result()
		want := strconv.FormatInt(ls.Fence(), 10)
		switch {
		case n == 0 && onReplica == 1:
			t.Fatalf("MinReplicas 0: the replica behind a 150 ms link has the lease key as TryAcquire returns; the rig shows no window")
		case n == 1 && (onReplica != 1 || fenceThere != want || guardThere != want):
			t.Fatalf("MinReplicas 1: on the replica as the calls return: key %d, fence %q, guard %q; want 1, %q, %q",
				onReplica, fenceThere, guardThere, want, want)
		}
		if err := ls.Release(ctx); err != nil {
			t.Fatalf("MinReplicas %d: Release = %v", n, err)
		}
	}
}

// A grant that no replica acknowledges is undone: TryAcquire fails with ErrUnreplicated, the key is free again,
// the fence counter keeps its increment, and the outcome is counted. Once a replica is back, grants go on.
func TestMinReplicasUndoesAnUnreplicatedGrant(t *testing.T) {
	m, r := rig.StartRedisPair(t)
	r.Kill()
	reg := prometheus.NewRegistry()
	o := lease.Options{TTL: 5 * time.Second, Prefix: rig.Prefix(t) + ":lease:", Holder: t.Name(),
		MinReplicas: 1, ReplicaTimeout: 100 * time.Millisecond, Metrics: lease.NewMetrics(reg, "agent")}
	master := m.Client()
	l := newLocker(t, master, o)
	ctx := context.Background()
	ls, err := l.TryAcquire(ctx, "k")
	if !errors.Is(err, lease.ErrUnreplicated) || ls != nil {
		t.Fatalf("TryAcquire with the replica down = %v, %v; want ErrUnreplicated", ls, err)
	}
	if n, _ := master.Exists(ctx, o.Prefix+"{k}").Result(); n != 0 {
		t.Fatalf("the lease key exists after an unreplicated grant; want it undone")
	}
	if got, ok := rig.MetricValue(rig.Gather(t, reg), "agent_lease_acquire_total", "outcome=unreplicated"); !ok || got != 1 {
		t.Fatalf(`agent_lease_acquire_total{outcome="unreplicated"} = %v, want 1`, got)
	}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	if err := rig.WaitInSync(r.Addr, "", 15*time.Second); err != nil {
		t.Fatal(err)
	}
	ls, err = l.TryAcquire(ctx, "k")
	if err != nil || ls.Fence() != 2 {
		t.Fatalf("TryAcquire with the replica back = %v; want fence 2 (the undone grant used 1)", err)
	}
	_ = ls.Release(ctx)
}

// A renewal that no replica acknowledges does not move the lease's deadline: with the replica gone the lease
// expires by its TTL, though the master itself renewed the key.
func TestMinReplicasRenewalNeedsTheReplica(t *testing.T) {
	m, r := rig.StartRedisPair(t)
	// A 3 s TTL gives the first grant's WAIT a second (TTL/3, at most 1 s): a third of a 1 s TTL missed the live
	// replica on a loaded CI machine.
	o := lease.Options{TTL: 3 * time.Second, Prefix: rig.Prefix(t) + ":lease:", Holder: t.Name(), MinReplicas: 1}
	l := newLocker(t, m.Client(), o)
	ls, err := l.TryAcquire(context.Background(), "k")
	if err != nil {
		t.Fatalf("TryAcquire = %v", err)
	}
	r.Kill()
	select {
	case <-ls.Lost():
	case <-time.After(10 * time.Second):
		t.Fatalf("lease still held 10 s after its replica died, with a 3 s TTL and MinReplicas 1")
	}
	if cause := context.Cause(ls.Context()); !errors.Is(cause, lease.ErrExpired) {
		t.Fatalf("cause = %v, want ErrExpired", cause)
	}
}
