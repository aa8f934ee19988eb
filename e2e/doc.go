// Package e2e holds the hub's end-to-end tests: the program run in-process through app.Run on 127.0.0.1:0, or the
// built binary as a process, against a real redis-server; with tag slow also Cluster, Sentinel, nginx, Chromium and
// network namespaces. The tests run from the module root (TestMain changes to it).
package e2e
