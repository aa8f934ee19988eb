package limits

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// CORS answers browsers from other origins: only origins on the allow-list get CORS headers (with credentials, so
// a console elsewhere can send its cookie), and a non-safe cross-origin request from any other origin is refused,
// which is what keeps a page elsewhere from publishing with a visitor's cookie. The list is empty by default.
type CORS struct {
	allowed map[string]bool
	csrf    *http.CrossOriginProtection
}

// NewCORS checks and keeps the allow-list. Each entry is an exact origin, scheme://host[:port]; "*" is refused
// because a wildcard cannot go with credentials and would hand every site a logged-in user's streams.
func NewCORS(origins []string) (*CORS, error) {
	c := &CORS{allowed: map[string]bool{}, csrf: http.NewCrossOriginProtection()}
	for _, o := range origins {
		o = strings.TrimSpace(o)
		if o == "" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("cors origin %q: want scheme://host[:port], e.g. https://console.example.com", o)
		}
		o = strings.ToLower(u.Scheme + "://" + u.Host)
		c.allowed[o] = true
		if err := c.csrf.AddTrustedOrigin(o); err != nil {
			return nil, fmt.Errorf("cors origin %q: %w", o, err)
		}
	}
	return c, nil
}

// Preflight methods and headers a listed origin may use.
const (
	allowMethods = "GET, POST, DELETE"
	allowHeaders = "Authorization, Content-Type, Last-Event-ID"
)

// Check sets the CORS headers for r on h. It returns done when the request was a preflight that is now fully
// answered (204 for the caller to write), or a *Refusal when r must be turned away.
func (c *CORS) Check(r *http.Request, h http.Header) (done bool, err error) {
	origin := r.Header.Get("Origin")
	listed := origin != "" && c.allowed[strings.ToLower(origin)]
	if origin != "" {
		h.Add("Vary", "Origin")
	}
	preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
	switch {
	case listed:
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Credentials", "true")
		h.Set("Access-Control-Expose-Headers", "Retry-After")
		if preflight {
			h.Set("Access-Control-Allow-Methods", allowMethods)
			h.Set("Access-Control-Allow-Headers", allowHeaders)
			h.Set("Access-Control-Max-Age", "600")
			return true, nil
		}
	case preflight:
		return false, refuseOrigin(origin)
	default:
		if err := c.csrf.Check(r); err != nil {
			return false, refuseOrigin(origin)
		}
	}
	return false, nil
}

func refuseOrigin(origin string) *Refusal {
	if len(origin) > 100 {
		origin = origin[:100] + "…"
	}
	return &Refusal{Code: http.StatusForbidden, Reason: ReasonOrigin,
		Msg: fmt.Sprintf("cross-origin request from %q refused: the origin is not in cors.allowed_origins", origin)}
}
