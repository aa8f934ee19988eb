package dispatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/lease"
)

// failoverReport is what --failover prints.
type failoverReport struct {
	Scenario    string `json:"scenario"`
	Topology    string `json:"topology"`
	TTL         string `json:"ttl"`
	MinReplicas int    `json:"min_replicas"`
	ReplDelay   string `json:"replication_delay"`
	Runs        int    `json:"runs"`

	FirstGranted  int `json:"first_holder_granted"`
	Unreplicated  int `json:"first_holder_refused_unreplicated"` // ErrUnreplicated: undone, not granted
	SecondGranted int `json:"second_holder_granted_within_ttl"`
	// Duplicates: runs in which the second holder got the key while the first still held its lease.
	Duplicates int `json:"duplicates"`
	// FenceReused: runs in which the second holder's fence was not above the first's (the counter went back).
	FenceReused int       `json:"fence_reused"`
	FailoverMS  []float64 `json:"failover_ms"` // from the kill to the sentinel naming the replica, per run
	Violations  []string  `json:"violations"`
}

// failoverRun is one run's outcome.
//
// With --zone-loss a second replica follows the master directly and dies with it, as a replica in the master's
// zone would: WAIT 1 is then answered by a replica that cannot be promoted, and only WAIT 2 covers the far one.
type failoverRun struct {
	granted, unreplicated, second, duplicate, fenceReused bool
	failover                                              time.Duration
}

// runFailover repeats: a fresh Sentinel rig (a master, a replica replicating through a link that holds every byte
// for --repl-delay, one sentinel), holder A acquires, the link is cut and the master SIGKILLed at once, the sentinel
// promotes the replica, a new replica joins it (so WAIT can be answered again), and holder B tries to acquire the
// same key for the rest of A's TTL. B getting it while A's lease still holds is a duplicate.
func runFailover(ctx context.Context, cfg config, stdout io.Writer) error {
	rep := failoverReport{
		Scenario: "failover", TTL: cfg.ttl.String(), MinReplicas: cfg.minReplicas, ReplDelay: cfg.replDelay.String(),
		Runs: cfg.runs, Violations: []string{},
		Topology: "sentinel (1), master, replica behind a delaying link cut with the master",
	}
	if cfg.zoneLoss {
		rep.Topology = "sentinel (1), master and a near replica that fail together, replica behind a delaying link"
	}
	for i := range cfg.runs {
		r, err := failoverOnce(ctx, cfg, i)
		if err != nil {
			return fmt.Errorf("dispatch-test --failover: run %d: %w", i+1, err)
		}
		rep.add(r)
	}
	if cfg.minReplicas > 0 && rep.Duplicates > 0 {
		rep.Violations = append(rep.Violations, fmt.Sprintf("%d duplicates with --min-replicas %d", rep.Duplicates, cfg.minReplicas))
	}
	if err := rep.print(stdout, cfg.jsonOut); err != nil {
		return fmt.Errorf("dispatch-test: write report: %w", err)
	}
	if len(rep.Violations) > 0 {
		return fmt.Errorf("dispatch-test --failover: %w: %v", ErrInvariant, rep.Violations)
	}
	return nil
}

func (r *failoverReport) add(x failoverRun) {
	count := func(n *int, b bool) {
		if b {
			*n++
		}
	}
	count(&r.FirstGranted, x.granted)
	count(&r.Unreplicated, x.unreplicated)
	count(&r.SecondGranted, x.second)
	count(&r.Duplicates, x.duplicate)
	count(&r.FenceReused, x.fenceReused)
	if x.failover > 0 {
		r.FailoverMS = append(r.FailoverMS, ms(x.failover))
	}
}

// failoverRig is one run's Redis: the sentinel rig, the link in front of its master, and clients of it.
type failoverRig struct {
	owner    rig.Owner
	sentinel *rig.Sentinel
	link     *rig.Link
	near     *rig.Redis // with --zone-loss: a second replica, next to the master, that fails with it
}

func startFailoverRig(cfg config) (*failoverRig, error) {
	r := &failoverRig{}
	err := r.owner.Do(func() {
		r.sentinel = rig.StartSentinelWith(&r.owner, rig.SentinelOptions{
			DownAfter: 300 * time.Millisecond, FailoverTimeout: time.Minute,
			ReplicaOf: func(master string) string {
				r.link = rig.StartLink(&r.owner, master, cfg.replDelay)
				return r.link.Addr
			},
		})
	})
	if err == nil && cfg.zoneLoss {
		err = r.owner.Do(func() { r.near = r.startReplica(r.sentinel.Master.Addr) })
	}
	if err != nil {
		r.owner.Close()
		return nil, fmt.Errorf("start the sentinel rig: %w", err)
	}
	return r, nil
}

// startReplica starts a replica of master and waits until it is in sync; call it inside owner.Do.
func (r *failoverRig) startReplica(master string) *rig.Redis {
	host, port, _ := net.SplitHostPort(master)
	n := rig.StartRedisWith(&r.owner, rig.RedisOptions{Args: []string{"--replicaof", host, port}})
	if err := rig.WaitInSync(n.Addr, "", 15*time.Second); err != nil {
		r.owner.Fatalf("%v", err)
	}
	return n
}

func (r *failoverRig) client() *redis.Client {
	return redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName: rig.MasterName, SentinelAddrs: r.sentinel.Addrs,
		DialTimeout: 500 * time.Millisecond, ReadTimeout: 2 * time.Second, MaxRetries: -1,
	})
}

// fail cuts the replication link and kills the master (and the near replica) at once, waits for the promotion and
// starts replicas of the new master, as many as WAIT asks for. It returns the time from the kill to the promotion.
func (r *failoverRig) fail(ctx context.Context, replicas int) (time.Duration, error) {
	s := r.sentinel
	r.link.Cut()
	s.Master.Kill()
	if r.near != nil {
		r.near.Kill()
	}
	killed := time.Now()
	for s.CurrentMaster() != s.Replica.Addr {
		if time.Since(killed) > 30*time.Second || ctx.Err() != nil {
			return 0, fmt.Errorf("the sentinel did not promote %s within 30 s", s.Replica.Addr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	took := time.Since(killed)
	err := r.owner.Do(func() {
		for range max(1, replicas) {
			r.startReplica(s.Replica.Addr)
		}
	})
	return took, err
}

func failoverOnce(ctx context.Context, cfg config, i int) (failoverRun, error) {
	var out failoverRun
	fr, err := startFailoverRig(cfg)
	if err != nil {
		return out, err
	}
	defer fr.owner.Close()
	ca, cb := fr.client(), fr.client()
	defer ca.Close()
	defer cb.Close()
	opts := func(holder string) lease.Options {
		return lease.Options{TTL: cfg.ttl, RenewEvery: cfg.renewEvery, MinReplicas: cfg.minReplicas,
			Prefix: cfg.prefix + "lease:", Holder: holder}
	}
	a, b := lease.New(ca, opts("holder-a")), lease.New(cb, opts("holder-b"))
	defer a.Close()
	defer b.Close()
	key := fmt.Sprintf("entity-%d", i)
	la, err := a.TryAcquire(ctx, key) // one attempt: the rig is fresh, the key free
	if errors.Is(err, lease.ErrUnreplicated) {
		out.unreplicated = true
		return out, nil
	}
	if err != nil {
		return out, fmt.Errorf("first holder: %w", err)
	}
	granted := time.Now()
	out.granted = true
	defer la.Release(context.WithoutCancel(ctx))
	if out.failover, err = fr.fail(ctx, cfg.minReplicas); err != nil {
		return out, err
	}
	bctx, cancel := context.WithDeadline(ctx, granted.Add(cfg.ttl))
	defer cancel()
	lb, err := b.Acquire(bctx, key)
	if err != nil {
		return out, ctx.Err() // B waited out A's whole term: no second holder
	}
	out.second = true
	out.duplicate = la.Err() == nil // A's lease still held when B got the key: two holders at once
	out.fenceReused = lb.Fence() <= la.Fence()
	_ = lb.Release(context.WithoutCancel(ctx))
	return out, nil
}

func (r failoverReport) print(w io.Writer, asJSON bool) error {
	if asJSON {
		return writeJSON(w, r)
	}
	tw, row := table(w)
	fmt.Fprintf(tw, "dispatch-test --failover: %d runs, ttl %s, min-replicas %d, %s of %s\n", r.Runs, r.TTL,
		r.MinReplicas, r.Topology, r.ReplDelay)
	row("first holder granted", fmt.Sprintf("%d (%d refused: too few replicas acknowledged, undone)", r.FirstGranted, r.Unreplicated))
	row("second holder granted within ttl", r.SecondGranted)
	row("duplicates (two holders at once)", r.Duplicates)
	row("fence handed out again", r.FenceReused)
	if len(r.FailoverMS) > 0 {
		s := slices.Sorted(slices.Values(r.FailoverMS))
		row("kill to promotion p50 / max", fmt.Sprintf("%.0f / %.0f ms", s[len(s)/2], s[len(s)-1]))
	}
	verdict := "OK: no second holder while the first held its lease"
	switch {
	case len(r.Violations) > 0:
		verdict = fmt.Sprintf("FAIL: %v", r.Violations)
	case r.Duplicates > 0:
		verdict = "duplicates: the failover lost grants the replica had not received (asynchronous replication)"
	}
	row("verdict", verdict)
	return tw.Flush()
}
