package limits

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"sync"
)

// Peers bounds what one address may hold and start at the connection level, before any request is read: how many
// connections it keeps that carry no stream (idle keep-alives, requests in progress: each costs a goroutine and a
// descriptor), and how fast it opens new ones. A connection over either bound is closed at once, unanswered.
// Streams are bounded by Conns instead, so a connection stops counting here while it carries one.
//
// Trusted proxies are exempt: their connections carry many clients, whom the stream limits count by
// X-Forwarded-For. Peers is safe for concurrent use; its hooks are http.Server's ConnState and ConnContext.
type Peers struct {
	perAddr int
	rate    *Rate
	exempt  Proxies
	refused func(reason string)

	mu     sync.Mutex
	conns  map[net.Conn]*peerConn
	byAddr map[netip.Addr]int // connections counted, per bucket
}

// peerConn is one counted connection; it is not counted while streams > 0.
type peerConn struct {
	addr    netip.Addr
	streams int
}

// NewPeers admits at most perAddr connections without a stream from one address (0: no limit), at the pace rate
// allows (nil: any). refused, when not nil, is told the reason of each connection it closes.
func NewPeers(perAddr int, rate *Rate, exempt Proxies, refused func(reason string)) *Peers {
	if refused == nil {
		refused = func(string) {}
	}
	return &Peers{perAddr: perAddr, rate: rate, exempt: exempt, refused: refused,
		conns: map[net.Conn]*peerConn{}, byAddr: map[netip.Addr]int{}}
}

// ConnState is the http.Server hook: a new connection is admitted or closed; one that leaves net/http (hijacked by
// a stream, or closed) is forgotten.
func (p *Peers) ConnState(c net.Conn, s http.ConnState) {
	switch s {
	case http.StateNew:
		if reason := p.admit(c); reason != "" {
			_ = c.Close()
			p.refused(reason)
		}
	case http.StateHijacked, http.StateClosed:
		p.mu.Lock()
		if pc := p.conns[c]; pc != nil {
			delete(p.conns, c)
			if pc.streams == 0 {
				p.uncount(pc.addr)
			}
		}
		p.mu.Unlock()
	}
}

func (p *Peers) admit(c net.Conn) (reason string) {
	ap, err := netip.ParseAddrPort(c.RemoteAddr().String())
	if err != nil {
		return "" // not TCP (a test's pipe): nothing to count by
	}
	a := ap.Addr().Unmap()
	if p.exempt.trusted(a) {
		return ""
	}
	if p.rate.AllowAddr(a) != nil {
		return ReasonConnRate
	}
	b := bucket(a)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.perAddr > 0 && p.byAddr[b] >= p.perAddr {
		return ReasonNonStreamPerIP
	}
	p.byAddr[b]++
	p.conns[c] = &peerConn{addr: b}
	return ""
}

func (p *Peers) uncount(b netip.Addr) {
	if p.byAddr[b]--; p.byAddr[b] <= 0 {
		delete(p.byAddr, b)
	}
}

type connKey struct{}

// ConnContext is the http.Server hook that lets Stream find a request's connection.
func (p *Peers) ConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// Stream takes the connection of r out of the count while a stream runs on it; the returned function, called once
// the handler has returned, counts it again unless it has left net/http by then (an HTTP/1.1 stream takes its
// connection over: see ConnState).
func (p *Peers) Stream(r *http.Request) (end func()) {
	c, _ := r.Context().Value(connKey{}).(net.Conn)
	p.mu.Lock()
	defer p.mu.Unlock()
	pc := p.conns[c]
	if pc == nil {
		return func() {}
	}
	if pc.streams++; pc.streams == 1 {
		p.uncount(pc.addr)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.conns[c] != pc {
				return
			}
			if pc.streams--; pc.streams == 0 {
				p.byAddr[pc.addr]++
			}
		})
	}
}

// Held returns the number of connections counted for a's bucket.
func (p *Peers) Held(a netip.Addr) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.byAddr[bucket(a.Unmap())]
}
