// Command hub-bench is the hub's load generator (package internal/bench): it starts a hub binary (--hub-bin) or
// loads a running one (--url, --redis-url), and prints what it measured. BENCHMARKS.md has the method and figures.
package main

import "github.com/syncverse/hub/internal/bench"

func main() { bench.Tool.Main() }
