package auth

import (
	"net/http"
	"strings"
)

// MaxTokenBytes bounds a token; anything longer is refused before any parsing.
const MaxTokenBytes = 8 << 10

// DefaultCookie is the cookie read when none is configured.
const DefaultCookie = "hub_token"

// HostCookiePrefix is put before the cookie's name when it is Secure: a browser keeps a "__Host-" cookie only when it
// is Secure, has Path=/ and no Domain, so no sibling subdomain or plain-HTTP page can set or shadow it.
const HostCookiePrefix = "__Host-"

// HostCookie is name with HostCookiePrefix, once.
func HostCookie(name string) string {
	if strings.HasPrefix(name, HostCookiePrefix) {
		return name
	}
	return HostCookiePrefix + name
}

// Extractor finds a request's token: the Authorization header first, then the cookie, then (only when AllowQuery)
// the access_token query parameter. The query is off by default because URLs end up in proxy logs, browser
// history and Referer headers.
type Extractor struct {
	// Cookie is the session cookie's name, default DefaultCookie. Its "__Host-" form (HostCookie) is read first,
	// then the name itself unless it already has the prefix.
	Cookie     string
	AllowQuery bool
	// ProxyHeader names a header in which an authenticating proxy passes the access token (oauth2-proxy's
	// X-Forwarded-Access-Token). It is read first, and only from a request FromProxy vouches for: anyone else
	// could send the header too.
	ProxyHeader string
	FromProxy   func(r *http.Request) bool
}

// Extract returns the token, "" when the request carries none, or an *Error when what it carries is unusable:
// several Authorization headers or access_token parameters, a scheme other than Bearer, a token in the URL while
// that is off, or something that is not a compact JWS. Being strict here means no ambiguity about which
// credential was meant.
func (x Extractor) Extract(r *http.Request) (string, error) {
	q := r.URL.Query()["access_token"]
	if len(q) > 0 && !x.AllowQuery {
		return "", refuse(ReasonQueryToken, "access_token in the URL is disabled (auth.allow_query_token); send the token in the Authorization header or the "+x.cookie()+" cookie")
	}
	if len(q) > 1 {
		return "", refuse(ReasonBadToken, "several access_token parameters")
	}
	if tok, ok, err := x.fromProxy(r); ok || err != nil {
		return tok, err
	}
	if h := r.Header.Values("Authorization"); len(h) > 0 {
		return bearer(h)
	}
	for _, name := range []string{HostCookie(x.cookie()), x.cookie()} {
		if cs := r.CookiesNamed(name); len(cs) > 0 && cs[0].Value != "" {
			return checkShape(cs[0].Value) // browsers send the most specific path first
		}
	}
	if len(q) == 1 {
		return checkShape(q[0])
	}
	return "", nil
}

// fromProxy reads ProxyHeader when a trusted proxy sent the request; ok is false when there is nothing to read.
func (x Extractor) fromProxy(r *http.Request) (tok string, ok bool, err error) {
	if x.ProxyHeader == "" || x.FromProxy == nil {
		return "", false, nil
	}
	h := r.Header.Values(x.ProxyHeader)
	if len(h) == 0 || !x.FromProxy(r) {
		return "", false, nil
	}
	if len(h) > 1 {
		return "", true, refuse(ReasonBadToken, "several "+http.CanonicalHeaderKey(x.ProxyHeader)+" headers")
	}
	v := strings.TrimSpace(h[0])
	if scheme, rest, found := strings.Cut(v, " "); found && strings.EqualFold(scheme, "Bearer") {
		v = strings.TrimSpace(rest)
	}
	tok, err = checkShape(v)
	return tok, true, err
}

// bearer reads the token of an Authorization header, given as its values.
func bearer(h []string) (string, error) {
	if len(h) > 1 {
		return "", refuse(ReasonBadToken, "several Authorization headers")
	}
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h[0]), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", refuse(ReasonBadToken, `the Authorization header must be "Bearer <token>"`)
	}
	return checkShape(strings.TrimSpace(tok))
}

func (x Extractor) cookie() string {
	if x.Cookie == "" {
		return DefaultCookie
	}
	return x.Cookie
}

// checkShape accepts only what a compact JWS can be: three dot-separated base64url parts, bounded in length.
func checkShape(tok string) (string, error) {
	if tok == "" || len(tok) > MaxTokenBytes {
		return "", refuse(ReasonBadToken, "malformed token: empty or longer than 8 KiB")
	}
	dots := 0
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		switch {
		case c == '.':
			dots++
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
		default:
			return "", refuse(ReasonBadToken, "malformed token: only base64url characters and dots are allowed")
		}
	}
	if dots != 2 {
		return "", refuse(ReasonBadToken, "malformed token: a JWT has three dot-separated parts")
	}
	return tok, nil
}
