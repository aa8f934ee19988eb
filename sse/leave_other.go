//go:build !linux

package sse

import "time"

// leaver has no poller of its own outside Linux: each detached stream gets a reader goroutine (detached.read).
type leaver struct{}

func newLeaver() *leaver             { return nil }
func (l *leaver) add(*detached) bool { return false }
func (l *leaver) remove(*detached)   {}
func (l *leaver) wait(time.Duration) {}
func (l *leaver) close()             {}
