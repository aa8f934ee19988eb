package limits

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"
)

// Proxies are the peers whose X-Forwarded-For the hub believes. The zero value believes nobody, so a client cannot
// dodge its per-address limit by sending the header itself.
type Proxies struct {
	nets []netip.Prefix
}

// ParseProxies reads addresses and CIDR ranges ("10.0.0.0/8", "127.0.0.1", "::1").
func ParseProxies(list []string) (Proxies, error) {
	var p Proxies
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		pfx, err := netip.ParsePrefix(s)
		if err != nil {
			addr, aerr := netip.ParseAddr(s)
			if aerr != nil {
				return Proxies{}, fmt.Errorf("trusted proxy %q: not an address or CIDR range", s)
			}
			pfx = netip.PrefixFrom(addr.Unmap(), addr.Unmap().BitLen())
		}
		p.nets = append(p.nets, pfx.Masked())
	}
	return p, nil
}

func (p Proxies) trusted(a netip.Addr) bool {
	for _, n := range p.nets {
		if n.Contains(a) {
			return true
		}
	}
	return false
}

// Trusts reports whether r comes straight from a trusted proxy, so a header that proxy sets may be believed.
func (p Proxies) Trusts(r *http.Request) bool {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	return err == nil && p.trusted(ap.Addr().Unmap())
}

// ClientIP returns the address a request comes from: the peer, or, when the peer is a trusted proxy, the
// right-most X-Forwarded-For entry that is not itself a trusted proxy. Entries left of that one were written by
// the client and prove nothing. An unparsable entry stops the walk at the last hop that vouched for it.
func (p Proxies) ClientIP(r *http.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	client := ap.Addr().Unmap()
	if len(p.nets) == 0 || !p.trusted(client) {
		return client
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := parseHop(hops[i])
		if !ok {
			return client
		}
		client = a
		if !p.trusted(a) {
			return a
		}
	}
	return client
}

func parseHop(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), true
	}
	return netip.Addr{}, false
}

// bucket is the key a per-address limit counts under. An IPv6 client usually holds a whole /64, so counting per
// address would let it open as many connections as it likes.
func bucket(a netip.Addr) netip.Addr {
	if a.Is6() {
		if p, err := a.Prefix(64); err == nil {
			return p.Addr()
		}
	}
	return a
}
