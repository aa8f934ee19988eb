//go:build linux

package sse

import (
	"sync"
	"syscall"
	"time"
)

// leaver notices clients that leave (FIN or RST) without a goroutine per stream: the connections of raw
// streams are registered, edge-triggered, in an epoll set of their own, which the heartbeat wheel waits on between
// its ticks. Go's poller keeps its own registration of the same sockets; the two do not interfere.
type leaver struct {
	ep  int
	mu  sync.Mutex
	fds map[int32]*rawStream
	evs []syscall.EpollEvent // the wheel's only
}

const epollET = 1 << 31 // EPOLLET, which the syscall package declares as a negative int

func newLeaver() *leaver {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil // the streams get a reader goroutine each instead
	}
	return &leaver{ep: ep, fds: make(map[int32]*rawStream), evs: make([]syscall.EpollEvent, 256)}
}

// add watches d's connection; false when it cannot.
func (l *leaver) add(d *rawStream) bool {
	if l == nil || d.raw.rc == nil {
		return false
	}
	var err error
	cerr := d.raw.rc.Control(func(fd uintptr) {
		d.fd = int32(fd)
		l.mu.Lock()
		l.fds[d.fd] = d // before the registration, so that an event at once finds it
		l.mu.Unlock()
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP | epollET, Fd: d.fd}
		err = syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_ADD, int(fd), &ev)
	})
	if cerr == nil && err == nil {
		d.lv = l
		return true
	}
	l.mu.Lock()
	delete(l.fds, d.fd)
	l.mu.Unlock()
	return false
}

// remove stops watching d's connection; call it before the connection closes, so its number is not yet reused.
func (l *leaver) remove(d *rawStream) {
	l.mu.Lock()
	if l.fds[d.fd] == d {
		delete(l.fds, d.fd)
	}
	l.mu.Unlock()
	_ = syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_DEL, int(d.fd), nil)
}

// wait waits up to d for clients to leave and ends their subscriptions, which wakes their streams to finish.
func (l *leaver) wait(d time.Duration) {
	n, err := syscall.EpollWait(l.ep, l.evs, max(int(d.Milliseconds()), 1))
	if err != nil {
		return // EINTR: the wheel comes back soon
	}
	for _, ev := range l.evs[:n] {
		l.mu.Lock()
		s := l.fds[ev.Fd]
		l.mu.Unlock()
		if s != nil && s.left() {
			s.sub.Close()
		}
	}
}

func (l *leaver) close() { _ = syscall.Close(l.ep) }

// left reads what the client sent, without waiting: a client sends nothing after its request, so only the end of
// its side (or an error) counts. An event can be stale (its number reused by a newer connection): then there is
// nothing to read and the stream stays.
func (d *rawStream) left() bool {
	gone := false
	_ = d.raw.rc.Read(func(fd uintptr) bool {
		for {
			n, err := syscall.Read(int(fd), d.rbuf[:])
			switch {
			case err == syscall.EINTR || (err == nil && n > 0):
				continue // whatever a client sends is dropped
			case err == syscall.EAGAIN:
			default:
				gone = true // EOF (0 bytes) or an error
			}
			return true
		}
	})
	return gone
}
