package limits

import (
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
)

// Hosts is the Host allow-list of anonymous mode, against DNS rebinding: a page whose host name is made to resolve
// to this machine sends its own name as Host, and a matching Origin, so neither CORS nor the same-origin check can
// tell it from the console. An address (a page served from it is the hub's own), localhost and *.localhost (which
// browsers never resolve through DNS) are always served; any other name only when listed. Hosts is immutable
// after construction.
type Hosts struct {
	any   bool
	names map[string]bool // "name": any port
	pairs map[string]bool // "name:port"
}

// NewHosts reads the list: "name" (any port), "name:port", or "*" for any Host.
func NewHosts(list []string) (*Hosts, error) {
	h := &Hosts{names: map[string]bool{}, pairs: map[string]bool{}}
	for _, e := range list {
		e = strings.ToLower(strings.TrimSpace(e))
		switch {
		case e == "":
		case e == "*":
			h.any = true
		default:
			name, port, err := splitHost(e)
			if err != nil || name == "" || strings.ContainsAny(name, "/@?#* ") {
				return nil, fmt.Errorf("allowed host %q: want a name or name:port, e.g. hub.example.com", e)
			}
			if port == "" {
				h.names[name] = true
			} else {
				h.pairs[name+":"+port] = true
			}
		}
	}
	return h, nil
}

// splitHost splits "name[:port]"; an IPv6 literal is in brackets when a port follows, and may be bare otherwise.
func splitHost(hostport string) (name, port string, err error) {
	name = hostport
	switch i := strings.LastIndexByte(hostport, ':'); {
	case strings.HasPrefix(hostport, "["):
		end := strings.IndexByte(hostport, ']')
		if end < 0 || (end+1 < len(hostport) && hostport[end+1] != ':') {
			return "", "", fmt.Errorf("bad IPv6 literal %q", hostport)
		}
		name = hostport[1:end]
		if end+1 < len(hostport) {
			port = hostport[end+2:]
		}
	case i >= 0 && strings.Count(hostport, ":") == 1:
		name, port = hostport[:i], hostport[i+1:]
	}
	if port != "" {
		if n, perr := strconv.ParseUint(port, 10, 16); perr != nil || n == 0 {
			return "", "", fmt.Errorf("bad port %q", port)
		}
	}
	return name, port, nil
}

// Check refuses (403) a Host that is a name neither localhost nor listed. An empty Host (HTTP/1.0) is let through: no
// browser sends one.
func (h *Hosts) Check(host string) error {
	if h.any || host == "" {
		return nil
	}
	host = strings.ToLower(host)
	name, port, err := splitHost(host)
	if err == nil {
		if _, aerr := netip.ParseAddr(name); aerr == nil ||
			name == "localhost" || strings.HasSuffix(name, ".localhost") || h.names[name] || h.pairs[name+":"+port] {
			return nil
		}
	}
	if len(host) > 100 {
		host = host[:100] + "…"
	}
	return &Refusal{Code: http.StatusForbidden, Reason: ReasonHost,
		Msg: fmt.Sprintf("host %q is not served without credentials: use localhost or the hub's address, "+
			"or add the name to auth.allowed_hosts", host)}
}
