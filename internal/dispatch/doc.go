// Package dispatch is `dispatch-test`: the lease verification, as a command anyone can run against a Redis.
//
// It replays the incident the lease package fixes. Workflows are dispatched concurrently over a few entities; each
// takes its entity's lease, reads whether the entity's table exists, works for --work, creates the table if it did not
// exist, and releases. The table registry lives in Redis and fails with TableAlreadyExists on a second create; each
// registry operation goes through the entity's fence guard, so a holder whose lease passed to another is refused
// (stale fence) rather than believed. The report counts duplicate executions (two holders of one entity whose
// [acquired, done] intervals overlap, by this process's clock), TableAlreadyExists errors, stale-fence rejections and
// the release latency.
//
// With the watchdog, a run that shows any duplicate, TableAlreadyExists, stale write or lost lease fails with
// ErrInvariant. With --no-watchdog and work longer than the TTL, duplicates are expected: that is the incident.
//
// --crash and --pause need a second process. The command re-executes its own binary (os.Executable) with the hidden
// flag --child; the child holds a lease and reports its lock events and results on stdout, one "<kind> <json>" line
// each, and exits when its stdin closes, so it never outlives the parent. Tests re-execute the test binary the same
// way, with an environment variable that makes TestMain play the child.
//
// Every key of a run is under a fresh prefix and deleted at the end (unless --keep), so runs can share a Redis.
package dispatch
