// Package limits keeps any one client, and all of them together, from exhausting the hub: stream counts (global
// and per client address, believing X-Forwarded-For only from configured proxies), connection bounds per address
// before any request is read (Peers: how many without a stream, how many new ones per second), a publish rate per
// credential or address, the CORS allow-list with cross-origin write protection, and the Host allow-list that
// keeps a rebound DNS name away from an anonymous hub.
//
// It knows nothing of echo, tokens or Redis. Every refusal is a *Refusal carrying its HTTP status, a metric reason
// and, where waiting helps, a Retry-After. Conns, Peers and Rate are safe for concurrent use; CORS, Hosts and
// Proxies are immutable after construction.
package limits
