package rig

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// LineWriter writes "<kind> <json>" lines to W, one whole line at a time whichever goroutine writes: the way a
// child process of the load tools talks to its parent.
type LineWriter struct {
	mu sync.Mutex
	W  io.Writer
}

// Line writes kind and v as JSON on one line.
func (lw *LineWriter) Line(kind string, v any) {
	b, _ := json.Marshal(v)
	lw.mu.Lock()
	defer lw.mu.Unlock()
	fmt.Fprintf(lw.W, "%s %s\n", kind, b)
}
