package sse

import (
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// streamLog keeps the stream opened/closed lines readable through a reconnect storm: up to limit lines a second go
// out at info; the rest go to debug, and the next info line says how many were held back since the last one
// ("held_back"), so the count is never lost. The metrics have the exact totals.
type streamLog struct {
	limit int
	mu    sync.Mutex
	start time.Time // of the current one-second window
	n     int       // lines in the window
	held  int       // lines sent to debug since the last info line
}

// event returns the log event for one line at now.
func (l *streamLog) event(log zerolog.Logger, now time.Time) *zerolog.Event {
	l.mu.Lock()
	if now.Sub(l.start) >= time.Second || now.Before(l.start) {
		l.start, l.n = now, 0
	}
	l.n++
	over := l.n > l.limit
	held := 0
	if over {
		l.held++
	} else {
		held, l.held = l.held, 0
	}
	l.mu.Unlock()
	if over {
		return log.Debug()
	}
	ev := log.Info()
	if held > 0 {
		ev = ev.Int("held_back", held)
	}
	return ev
}
