//go:build !linux

package sse

import "time"

// leaver has no poller of its own outside Linux: each raw stream gets a reader goroutine (rawStream.read).
type leaver struct{}

func newLeaver() *leaver              { return nil }
func (l *leaver) add(*rawStream) bool { return false }
func (l *leaver) remove(*rawStream)   {}
func (l *leaver) wait(time.Duration)  {}
func (l *leaver) close()              {}
