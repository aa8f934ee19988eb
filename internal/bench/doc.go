// Package bench is the hub's load generator, run as `hub-bench`. It opens many SSE connections to a hub, publishes
// through the Redis publish script as agents do, checks every delivery on every connection (lost, duplicated, out of
// order) and measures what the hub costs: throughput, publish-to-receive latency, connect and replay times, and the
// hub process's RSS and CPU read from /proc.
//
// It measures a hub from the outside, never from within: either one at --url (with --redis-url for publishing and
// --pid for /proc), or a hub binary it starts itself (--hub-bin) against a Redis it names or starts. It owns every
// goroutine and child process it starts and stops them before Command returns.
package bench
