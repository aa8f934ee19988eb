// Package rig is the one copy of what the tests and the load tools use to run the hub and its Redis from outside:
//
//   - Redis: StartRedis gives a test a real redis-server on a free loopback port when the binary is installed, the
//     embedded miniredis otherwise (and says so once); StartRedisWith asks for a real one that fault tests can stop
//     and restart. StartCluster (with replicas, and a slot moved by hand), StartSentinel, StartRedisPair and
//     StartLink (a TCP proxy that delays and cuts a replication link) start rigs of real processes.
//   - Hub processes: StartHub runs a built hub binary (serve) on a free port and learns its URL from its log; it can
//     be killed, terminated, scraped, and dies with the process that started it.
//   - The /events wire: OpenStream reads frames over real HTTP as a line-reading EventSource would, on a goroutine
//     of its own that ends with the stream.
//   - Waiting and reading: Poll and Eventually (no sleeps), Metrics and Scrape (/metrics over HTTP), RawRequest (a
//     request no Go client would send), free loopback ports, JSON lines from several goroutines, SyncBuffer.
//   - The test binary: MainNoLeaks (goleak), Require and Missing (a tool a test needs; skips recorded for
//     `go run ./internal/rig/skipped`, failures under CI=true).
//
// A rig's owner is a TB: a test, or an Owner outside tests (hub-bench, dispatch-test --failover), for which a rig
// that cannot start is an error rather than a failed test. Every process and goroutine started here ends with its
// owner's cleanups. The hub binary does not link this package.
package rig
