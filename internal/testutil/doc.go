// Package testutil holds the helpers the hub's tests share, one copy each: waiting for a condition, reading
// /metrics over HTTP, sending a request no Go client would send. It is imported by tests only.
package testutil
