// Package topology holds the hub's end-to-end tests on real Redis topologies and networks, all behind the slow build
// tag: Redis Cluster, Sentinel, nginx in front of the hub, a network namespace that vanishes. They use the harness
// of package hubtest and run from the module root.
package topology
