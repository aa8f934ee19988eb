package chaos

import (
	"net"
	"sync"
	"time"
)

// Proxy forwards TCP connections from a loopback port to one upstream address. Cut drops every connection at once
// and refuses new ones (the port is closed, so a dial is refused, as when a network partition or a firewall rule
// cuts the path); Heal opens the same port again. LoseReplies swallows what the upstream answers next and then cuts,
// as when a reply is lost in transit after the request was executed.
type Proxy struct {
	Addr     string
	upstream string

	mu      sync.Mutex
	ln      net.Listener
	conns   map[net.Conn]struct{}
	cut     bool
	swallow bool
	closed  bool
	wg      sync.WaitGroup
	accepts int
}

// NewProxy listens on a free loopback port and forwards to upstream.
func NewProxy(upstream string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{Addr: ln.Addr().String(), upstream: upstream, conns: make(map[net.Conn]struct{})}
	p.serve(ln)
	return p, nil
}

func (p *Proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return // closed by Cut or Close
			}
			p.pipe(c)
		}
	}()
}

// pipe connects a client to the upstream; both directions end when either side or Cut closes a connection.
func (p *Proxy) pipe(client net.Conn) {
	up, err := net.DialTimeout("tcp", p.upstream, time.Second)
	if err != nil {
		_ = client.Close()
		return
	}
	p.mu.Lock()
	if p.cut || p.closed {
		p.mu.Unlock()
		_ = client.Close()
		_ = up.Close()
		return
	}
	p.accepts++
	p.conns[client], p.conns[up] = struct{}{}, struct{}{}
	p.mu.Unlock()
	p.wg.Add(2)
	go func() { defer p.wg.Done(); p.copy(up, client, false) }()
	go func() { defer p.wg.Done(); p.copy(client, up, true) }()
}

func (p *Proxy) copy(dst, src net.Conn, reply bool) {
	defer func() {
		p.mu.Lock()
		delete(p.conns, dst)
		delete(p.conns, src)
		p.mu.Unlock()
		_ = dst.Close()
		_ = src.Close()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && reply && p.takeSwallow() {
			p.dropAll() // the reply never arrives and the connection breaks, as a lost packet followed by a timeout would
			return
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return // EOF or a cut: the deferred close ends the other direction too
		}
	}
}

func (p *Proxy) takeSwallow() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.swallow
	p.swallow = false
	return s
}

// LoseReplies makes the next chunk the upstream sends vanish, and cuts every connection when it does.
func (p *Proxy) LoseReplies() {
	p.mu.Lock()
	p.swallow = true
	p.mu.Unlock()
}

// Cut closes every proxied connection and the listening port: new dials are refused until Heal.
func (p *Proxy) Cut() {
	p.mu.Lock()
	if p.cut || p.closed {
		p.mu.Unlock()
		return
	}
	p.cut = true
	ln := p.ln
	p.mu.Unlock()
	_ = ln.Close()
	p.dropAll()
}

func (p *Proxy) dropAll() {
	p.mu.Lock()
	conns := make([]net.Conn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

// Heal opens the same port again. The port was ours a moment ago, so a retry loop covers a slow release.
func (p *Proxy) Heal() error {
	var err error
	for range 50 {
		var ln net.Listener
		if ln, err = net.Listen("tcp", p.Addr); err == nil {
			p.mu.Lock()
			p.cut = false
			p.mu.Unlock()
			p.serve(ln)
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}

// Accepted returns how many connections the proxy has forwarded so far.
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepts
}

// Close stops the proxy and waits for its goroutines.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	ln := p.ln
	p.mu.Unlock()
	_ = ln.Close()
	p.dropAll()
	p.wg.Wait()
}
