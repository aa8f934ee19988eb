package config

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// validate checks the auth keys that go together; the key set URL's scheme, the roles claim's path and the roles'
// patterns are checked by auth.NewVerifier when the hub starts.
func (a AuthConfig) validate(proxiesTrusted bool) error {
	var errs []error
	if a.JWKSRefresh < time.Second {
		errs = append(errs, fmt.Errorf("auth.jwks_refresh: %v is shorter than 1s", a.JWKSRefresh))
	}
	if a.RolesClaim != "" && len(a.Roles) == 0 {
		errs = append(errs, errors.New("auth.roles_claim is set but auth.roles maps no role to patterns, so it would grant nothing"))
	}
	if a.RolesClaim == "" && len(a.Roles) > 0 {
		errs = append(errs, errors.New("auth.roles is set but auth.roles_claim does not say which claim lists a token's roles"))
	}
	if h := a.ProxyHeader; h != "" {
		switch {
		case !validCookieName(h): // a header name is a token too
			errs = append(errs, fmt.Errorf("auth.proxy_header %q is not a header name", h))
		case strings.EqualFold(h, "Authorization") || strings.EqualFold(h, "Cookie"):
			errs = append(errs, fmt.Errorf("auth.proxy_header %q: name the header the proxy adds (e.g. X-Forwarded-Access-Token); %s is read anyway", h, http.CanonicalHeaderKey(h)))
		case !proxiesTrusted:
			errs = append(errs, errors.New("auth.proxy_header is believed only from limits.trusted_proxies, which is empty: list the proxy's address there"))
		}
	}
	if a.LoginURL != "" {
		u, err := url.Parse(a.LoginURL)
		if err != nil || !(strings.HasPrefix(a.LoginURL, "/") && !strings.HasPrefix(a.LoginURL, "//") ||
			(u.Scheme == "https" || u.Scheme == "http") && u.Host != "") {
			errs = append(errs, fmt.Errorf("auth.login_url %q: want an http(s) URL or a path starting with /", a.LoginURL))
		}
	}
	return errors.Join(errs...)
}
