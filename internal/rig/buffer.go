package rig

import (
	"bufio"
	"bytes"
	"strings"
	"sync"
)

// SyncBuffer is a bytes.Buffer that a writer goroutine (a logger, a child's stderr, a progress line) fills while
// another reads it: tests, and the rigs that keep a child process's stderr.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Lines returns the buffer's lines.
func (s *SyncBuffer) Lines() []string {
	sc := bufio.NewScanner(strings.NewReader(s.String()))
	var out []string
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}
