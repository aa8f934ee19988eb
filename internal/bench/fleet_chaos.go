package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/internal/delay"
	"github.com/syncverse/hub/internal/keyslot"
	"github.com/syncverse/hub/internal/rig"
)

// Fault is one fault --chaos made during the run and how it went.
type Fault struct {
	Name   string `json:"name"`
	At     Millis `json:"at_ms"`   // after publishing began
	Took   Millis `json:"took_ms"` // until the cluster (or the hub) was whole again
	Detail string `json:"detail"`
	Error  string `json:"error,omitempty"`
}

// faultTimeout bounds each fault's wait for the cluster or the hub to come back.
const faultTimeout = 60 * time.Second

// chaos makes the four faults one after another, each at its share of the run (or as soon as the one before is
// over), while the publishers and the clients go on. rm and cpu take a reading where a process is about to end.
func (r *fleetRun) chaos(ctx context.Context, began time.Time, rm *redisMeter, cpu *hubCPU) []Fault {
	steps := []struct {
		at   float64
		name string
		do   func(context.Context) (string, error)
	}{
		{0.10, "cluster failover (CLUSTER FAILOVER on a replica)", r.failover},
		{0.30, "master killed (SIGKILL), its replica takes over", func(ctx context.Context) (string, error) { return r.killMaster(ctx, rm) }},
		{0.50, "slot of a busy topic migrated to another master", r.migrate},
		{0.70, "rolling restart of one hub (SIGTERM, started again)", func(ctx context.Context) (string, error) { return r.restartHub(ctx, cpu) }},
	}
	var out []Fault
	for _, s := range steps {
		if !delay.Sleep(ctx, time.Until(began.Add(time.Duration(s.at*float64(r.o.duration))))) {
			break
		}
		f := Fault{Name: s.name, At: ms(time.Since(began))}
		start := time.Now()
		detail, err := s.do(ctx)
		f.Took, f.Detail = ms(time.Since(start)), detail
		if err != nil {
			f.Error = err.Error()
		}
		out = append(out, f)
	}
	return out
}

// topicSlot is the cluster slot of topic i's keys.
func (r *fleetRun) topicSlot(i int) int { return keyslot.Of(r.keys.Stream(r.topics[i%len(r.topics)])) }

// failover asks a replica of topic 1's master to take over, and waits until the old master follows it in sync.
func (r *fleetRun) failover(ctx context.Context) (string, error) {
	c := r.cluster
	slot := r.topicSlot(1)
	master, replicas := c.owner(ctx, slot)
	if master == nil || len(replicas) == 0 {
		return "", fmt.Errorf("slot %d has no master with a replica", slot)
	}
	rep := replicas[0]
	if err := rep.rdb.Do(ctx, "CLUSTER", "FAILOVER").Err(); err != nil {
		return "", fmt.Errorf("CLUSTER FAILOVER on %s: %w", rep.addr, err)
	}
	if err := rig.Poll(ctx, faultTimeout, pollEvery, rep.addr+" takes over from "+master.addr, func() bool {
		return rep.role(ctx) == "master" && master.role(ctx) == "slave"
	}); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s took slot %d's shard over from %s", rep.addr, slot, master.addr), c.waitOK(ctx, faultTimeout)
}

// killMaster SIGKILLs the master of topic 2's slot once its replica is in sync, waits until the replica has taken
// over, and starts the killed node again (it comes back as a replica of the new master).
func (r *fleetRun) killMaster(ctx context.Context, rm *redisMeter) (string, error) {
	c := r.cluster
	if err := c.waitOK(ctx, faultTimeout); err != nil {
		return "", err
	}
	slot := r.topicSlot(2)
	master, replicas := c.owner(ctx, slot)
	if master == nil || len(replicas) == 0 {
		return "", fmt.Errorf("slot %d has no master with a replica", slot)
	}
	rm.checkpoint(ctx, c) // what the master counted before it dies
	killed := time.Now()
	if err := master.kill(ctx); err != nil {
		return "", err
	}
	var took *redisNode
	if err := rig.Poll(ctx, faultTimeout, pollEvery, "a replica of "+master.addr+" takes over", func() bool {
		for _, rep := range replicas {
			if rep.role(ctx) == "master" {
				took = rep
				return true
			}
		}
		return false
	}); err != nil {
		return "", err
	}
	detail := fmt.Sprintf("%s killed; %s took over after %v", master.addr, took.addr, time.Since(killed).Round(time.Millisecond))
	if master.srv == nil {
		master.down = true
		return detail + "; the killed node is not this bench's to start again", nil
	}
	if err := master.start(); err != nil {
		return detail, err
	}
	return detail + "; started again as its replica", c.waitOK(ctx, faultTimeout)
}

// migrate moves the slot of topic 0, which has clients on every hub and events all along, to another master:
// IMPORTING/MIGRATING, MIGRATE of its keys, then SETSLOT NODE on every master.
func (r *fleetRun) migrate(ctx context.Context) (string, error) {
	c := r.cluster
	slot := r.topicSlot(0)
	src, _ := c.owner(ctx, slot)
	var dst *redisNode
	for _, n := range c.nodes {
		if n != src && !n.down && n.role(ctx) == "master" {
			dst = n
			break
		}
	}
	if src == nil || dst == nil {
		return "", fmt.Errorf("slot %d: no source and target master", slot)
	}
	srcID, err1 := src.rdb.Do(ctx, "CLUSTER", "MYID").Text()
	dstID, err2 := dst.rdb.Do(ctx, "CLUSTER", "MYID").Text()
	if err := errors.Join(err1, err2); err != nil {
		return "", err
	}
	if err := errors.Join(dst.rdb.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", srcID).Err(),
		src.rdb.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", dstID).Err()); err != nil {
		return "", fmt.Errorf("SETSLOT %d IMPORTING/MIGRATING: %w", slot, err)
	}
	moved, err := moveKeys(ctx, src, dst, slot)
	if err != nil {
		return "", err
	}
	var errs []error
	for _, n := range append([]*redisNode{dst, src}, c.nodes...) {
		if !n.down && n.role(ctx) == "master" {
			errs = append(errs, n.rdb.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", dstID).Err())
		}
	}
	if err := errors.Join(errs...); err != nil {
		return "", fmt.Errorf("SETSLOT %d NODE: %w", slot, err)
	}
	err = rig.Poll(ctx, faultTimeout, pollEvery, "every node names "+dst.addr+" for the slot", func() bool {
		for _, n := range c.nodes {
			if n.down {
				continue
			}
			if shards, err := n.rdb.ClusterSlots(ctx).Result(); err != nil || !servesSlot(shards, slot, dst.addr) {
				return false
			}
		}
		return true
	})
	return fmt.Sprintf("slot %d (%d keys) moved from %s to %s", slot, moved, src.addr, dst.addr), err
}

// moveKeys MIGRATEs every key of slot from src to dst, 100 at a time, and returns how many it moved.
func moveKeys(ctx context.Context, src, dst *redisNode, slot int) (int, error) {
	host, port, _ := net.SplitHostPort(dst.addr)
	moved := 0
	for {
		keys, err := src.rdb.ClusterGetKeysInSlot(ctx, slot, 100).Result()
		if err != nil {
			return moved, fmt.Errorf("GETKEYSINSLOT %d: %w", slot, err)
		}
		if len(keys) == 0 {
			return moved, nil
		}
		args := []any{"MIGRATE", host, port, "", 0, 10000, "KEYS"}
		for _, k := range keys {
			args = append(args, k)
		}
		if err := src.rdb.Do(ctx, args...).Err(); err != nil {
			return moved, fmt.Errorf("MIGRATE %d keys of slot %d: %w", len(keys), slot, err)
		}
		moved += len(keys)
	}
}

// restartHub ends hub 0 with SIGTERM (its streams end; the clients come back to the others or to it with
// Last-Event-ID) and starts it again on the same address.
func (r *fleetRun) restartHub(ctx context.Context, cpu *hubCPU) (string, error) {
	h := r.hubs[0]
	began := time.Now()
	last, _ := readProc(h.Pid())
	exit, err := h.Term(15 * time.Second)
	cpu.replaced(0, last)
	if err != nil {
		return "", fmt.Errorf("SIGTERM %s: %w", h.Addr, err)
	}
	var h2 *rig.Hub
	err = rig.Poll(ctx, faultTimeout, pollEvery, "the hub starts again on "+h.Addr, func() bool {
		h2, err = rig.StartHub(r.bin, h.Addr, r.env, 30*time.Second)
		return err == nil
	})
	if h2 == nil {
		return "", fmt.Errorf("start %s again: %w", h.Addr, err)
	}
	r.hubs[0] = h2
	return fmt.Sprintf("%s exited %v after SIGTERM and was ready again %v after it", h.Addr, exit.Round(time.Millisecond),
		time.Since(began).Round(time.Millisecond)), nil
}

func servesSlot(shards []redis.ClusterSlot, slot int, addr string) bool {
	for _, s := range shards {
		if slot >= s.Start && slot <= s.End && len(s.Nodes) > 0 {
			return s.Nodes[0].Addr == addr
		}
	}
	return false
}
