// Package lease is the hub's distributed lock: a lease on a key in Redis that a watchdog keeps alive while the work
// under it runs, with a fencing token that lets the protected resource refuse a holder that lost its lease.
//
// It exists because of an incident: a fixed 30 s lock on jobs of 40-60 s, with no renewal, let two Saga workflows of
// one project run at once, and both created the same tables (TableAlreadyExists).
//
// # Use
//
//	locker := lease.New(client, lease.Options{TTL: 30 * time.Second, Announcer: publisher, Metrics: metrics})
//	defer locker.Close()
//	ls, err := locker.Acquire(ctx, "project-42", lease.WithWorkflow("wf-7f3a"))
//	if err != nil { ... }
//	defer ls.Release(ctx)
//	err = work(ls.Context())                       // stops when the lease is lost
//	_, err = locker.Guard("db:{project-42}:fence").Run(ls.Context(), ls.Fence(), createTables, keys, args...)
//
// # What it owns
//
// Keys under Options.Prefix (default "hub:lease:"): "<prefix>{<key>}" holds the current holder's token with a TTL, and
// "<prefix>{<key>}:fence" the fence counter, which never expires. A Guard's key is chosen by its caller. Every step
// that must be atomic is one Lua script run with EVALSHA (EVAL on NOSCRIPT), without FUNCTION or shebang, so it runs
// on Redis 7 and on the embedded miniredis alike:
//   - acquire: SET NX PX and INCR of the fence counter together (why together: see acquireScript);
//   - renew: compare the token, then PEXPIRE (a GET then EXPIRE from the client could extend another holder's lock);
//   - release: compare the token, then DEL (so an expired holder cannot delete its successor's lock);
//   - fence: compare the token with the highest seen, record it, and run the guarded write, all in one script.
//
// # What it promises, and what it cannot
//
// While the watchdog renews the key (every TTL/3 by default) at most one holder has it. When a renewal finds the key
// gone or taken, or cannot reach Redis before the TTL would run out as measured here, the lease is over: Context is
// cancelled with ErrLost or ErrExpired, Lost is closed, and a "lost" or "expired" lock event goes out. The expiry is
// counted from the moment each successful renewal was sent, so this process gives up no later than Redis forgets.
//
// That promise is Redis's: a failover to a replica that never received a grant frees the key for a second holder,
// with the same fence. Options.MinReplicas makes each acquisition, renewal and fenced write wait (WAIT, from Go,
// after the script, on the same connection) for that many replicas, and undoes a grant they did not acknowledge
// (ErrUnreplicated). It narrows the window to the replicas that acknowledged failing with the master.
//
// A lock alone cannot promise that a write made under it is the latest holder's: a process paused between its last
// check and its write (GC, SIGSTOP, a slow disk) writes after its lease has expired and another holder has written.
// Hence the fence: the token grows with every acquisition, and a Guard at the resource refuses a lower token than it
// has seen (ErrStaleFence). Side effects that matter must go through a Guard, or through a resource that checks the
// fence itself.
//
// # What it must not do
//
// It never imports pubsub or anything else of the hub: lock events leave through the Announcer interface it declares,
// which pubsub.Publisher satisfies. It keeps no global state: no default registry, no global logger, no init.
// Announcing never blocks or fails a lease: events go through a bounded queue to one goroutine, and are dropped
// (and counted) when it is full.
//
// # Concurrency
//
// Locker, Lease and Guard are safe for concurrent use. Each goroutine has an owner that waits for it:
//   - the watchdog of a Lease ends on Release, on loss or expiry, and when the Acquire context ends (it then releases
//     the key itself, so the next holder need not wait out the TTL); Release waits for it, including the renewal it
//     may have in flight;
//   - the announce goroutine of a Locker starts with its first lock event and ends in Close, after publishing what is
//     queued for at most one AnnounceTimeout.
//
// Without a watchdog (Options.NoWatchdog, kept only to reproduce the incident) a lease has no goroutine, nothing
// cancels its Context when the TTL runs out, and Release reports ErrExpired when it finds the key gone.
package lease
