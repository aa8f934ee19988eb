// Package limits keeps any one client, and all of them together, from exhausting the hub: connection counts
// (global and per client address, believing X-Forwarded-For only from configured proxies), a publish rate per
// credential or address, and the CORS allow-list with cross-origin write protection.
//
// It knows nothing of echo, tokens or Redis. Every refusal is a *Refusal carrying its HTTP status, a metric reason
// and, where waiting helps, a Retry-After. Conns and Rate are safe for concurrent use; CORS and Proxies are
// immutable after construction.
package limits
