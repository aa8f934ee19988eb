// Package e2e holds the hub's end-to-end tests: the program run in-process through app.Run on 127.0.0.1:0, or the
// built binary as a process, against a real redis-server, and the examples' checks. The console's Chromium tests are
// in e2e/browser, Cluster, Sentinel, nginx and network namespaces in e2e/topology, the docs' checks in docs/. The
// tests run from the module root (TestMain changes to it).
package e2e
