// Package rig is what the tests and the load tools share to run the hub and its Redis from outside, where it needs
// no testing.TB: free loopback ports, polling for a condition, /metrics fetched and read, JSON lines written by
// several goroutines. One copy each: internal/testutil, internal/redistest, internal/chaos, internal/bench and
// internal/dispatch build on it. The hub binary does not link it.
package rig
