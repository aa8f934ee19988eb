package rig

import (
	"io"
	"net"
	"sync"
	"time"
)

// Link is a TCP proxy that holds every byte for Delay in each direction, as a replica's link to a master in another
// zone does, and that can be cut: what it holds in flight then never arrives, as when the master's machine dies
// with its network. On loopback a replica receives a write within microseconds, so without a Link no failover here
// would ever lose an acknowledged write.
type Link struct {
	Addr   string
	target string
	delay  time.Duration
	ln     net.Listener

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	open  chan struct{}  // closed while bytes flow; open (blocking) while the link is stalled
	done  chan struct{}  // closed by Close
	wg    sync.WaitGroup // the accept loop and two pumps per connection
}

// StartLink listens on a free loopback port and forwards to target; it is closed when t's cleanups run.
func StartLink(t TB, target string, delay time.Duration) *Link {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("link: listen: %v", err)
	}
	l := &Link{Addr: ln.Addr().String(), target: target, delay: delay, ln: ln, conns: map[net.Conn]struct{}{},
		open: make(chan struct{}), done: make(chan struct{})}
	close(l.open)
	l.wg.Add(1)
	go l.accept()
	t.Cleanup(l.Close)
	return l
}

func (l *Link) accept() {
	defer l.wg.Done()
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.DialTimeout("tcp", l.target, time.Second)
		if err != nil {
			_ = c.Close()
			continue
		}
		if !l.track(c, up) {
			return
		}
		l.wg.Add(2)
		go l.pump(c, up)
		go l.pump(up, c)
	}
}

// track registers a connection pair; it reports false (and closes them) once the link is closed.
func (l *Link) track(a, b net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conns == nil {
		_ = a.Close()
		_ = b.Close()
		return false
	}
	l.conns[a], l.conns[b] = struct{}{}, struct{}{}
	return true
}

type chunk struct {
	b  []byte
	at time.Time
}

// pump copies src to dst, each chunk Delay after it was read. It ends when either side closes; then both are closed,
// dropping whatever it still held.
func (l *Link) pump(src, dst net.Conn) {
	defer l.wg.Done()
	q := make(chan chunk, 4096)
	var writer sync.WaitGroup
	writer.Go(func() {
		for c := range q {
			time.Sleep(time.Until(c.at.Add(l.delay)))
			if !l.flowing() {
				break
			}
			if _, err := dst.Write(c.b); err != nil {
				break
			}
		}
		_ = src.Close()
		_ = dst.Close()
		for range q { // drain, so the reader is never blocked on a dead writer
		}
	})
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			q <- chunk{b: append([]byte(nil), buf[:n]...), at: time.Now()}
		}
		if err != nil {
			if err != io.EOF {
				_ = dst.Close() // a cut: what is still queued must not arrive
			}
			break
		}
	}
	close(q)
	writer.Wait()
}

// Stall makes the link a black hole, as a server that accepts connections but never answers: connections are still
// accepted, and nothing more is forwarded either way (what is read is held) until Resume.
func (l *Link) Stall() {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.open:
		l.open = make(chan struct{})
	default:
	}
}

// Resume lets what a Stall held, and everything after it, through.
func (l *Link) Resume() {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.open:
	default:
		close(l.open)
	}
}

// flowing waits while the link is stalled; it reports false once the link is closed.
func (l *Link) flowing() bool {
	l.mu.Lock()
	open := l.open
	l.mu.Unlock()
	select {
	case <-open:
		return true
	case <-l.done:
		return false
	}
}

// Cut closes every connection through the link at once, dropping what is in flight; the link accepts new ones.
func (l *Link) Cut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := range l.conns {
		_ = c.Close()
		delete(l.conns, c)
	}
}

// Close cuts the link, stops listening and waits for its goroutines. It is idempotent.
func (l *Link) Close() {
	_ = l.ln.Close()
	l.mu.Lock()
	select {
	case <-l.done:
	default:
		close(l.done)
	}
	l.mu.Unlock()
	l.mu.Lock()
	for c := range l.conns {
		_ = c.Close()
	}
	l.conns = nil
	l.mu.Unlock()
	l.wg.Wait()
}
