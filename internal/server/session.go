package server

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/syncverse/hub/auth"
	"github.com/syncverse/hub/internal/config"
)

// maxSessionForm bounds a sign-in form: a token and little else.
const maxSessionForm = 16 << 10

// sessions is /auth/session: a browser trades a token for an HttpOnly cookie (POST), asks who it is signed in as
// (GET) and signs out (DELETE). A cookie is how EventSource carries credentials, and one the page's script cannot
// read is one an injected script cannot steal. Cross-site POST and DELETE are refused by crossOrigin, as for
// /publish, so no other site can sign a browser in or out.
type sessions struct {
	sec    *Security
	cookie string
	// mode is auth.cookie_secure; with auto the cookie is Secure when the hub serves TLS or listens off loopback
	// (listenSecure), or when the request came over TLS or through a trusted proxy that says X-Forwarded-Proto: https.
	mode         string
	listenSecure bool
	loginURL     string // auth.login_url, told to a client that is not signed in
}

func newSessions(cfg config.Config, sec *Security) *sessions {
	name := cfg.Auth.CookieName
	if name == "" {
		name = auth.DefaultCookie
	}
	return &sessions{sec: sec, cookie: name, mode: cfg.Auth.CookieSecure,
		listenSecure: cfg.TLS.CertFile != "" || !config.IsLoopback(cfg.Listen), loginURL: cfg.Auth.LoginURL}
}

// secure tells whether the cookie set in answer to r is Secure (and so named with the "__Host-" prefix).
func (ss *sessions) secure(r *http.Request) bool {
	switch ss.mode {
	case config.CookieSecureAlways:
		return true
	case config.CookieSecureNever:
		return false
	}
	if ss.listenSecure || r.TLS != nil {
		return true
	}
	proto := r.Header.Values("X-Forwarded-Proto")
	return len(proto) > 0 && ss.sec.proxies.Trusts(r) && strings.EqualFold(strings.TrimSpace(proto[len(proto)-1]), "https")
}

// sessionReply is what each answer says: who the credentials name, what they allow, and when they end (Unix
// seconds; null for anonymous access, which does not end). LoginURL is auth.login_url, so that the console can
// offer the login page before a session ends, not only once it has.
type sessionReply struct {
	Subject   string   `json:"subject"`
	Subscribe []string `json:"subscribe"`
	Publish   []string `json:"publish"`
	Exp       *int64   `json:"exp"`
	LoginURL  string   `json:"login_url,omitempty"`
}

func (ss *sessions) reply(id *auth.Identity) sessionReply {
	r := sessionReply{Subject: id.Subject, Subscribe: id.Grant.Subscribe, Publish: id.Grant.Publish, LoginURL: ss.loginURL}
	if r.Subscribe == nil {
		r.Subscribe = []string{}
	}
	if r.Publish == nil {
		r.Publish = []string{}
	}
	if !id.Expires.IsZero() {
		exp := id.Expires.Unix()
		r.Exp = &exp
	}
	return r
}

// create verifies the token in the Authorization header or the form field token and sets it as the cookie, for
// no longer than the token is valid.
func (ss *sessions) create(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	tok, err := auth.SessionToken(c.Request(), maxSessionForm)
	switch {
	case err != nil:
		return ss.fail(c, err)
	case tok == "":
		return echo.NewHTTPError(http.StatusBadRequest, `no token: send it as "Authorization: Bearer <token>" or in the form field token`)
	case len(tok) > auth.MaxCookieToken:
		return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("the token is %d bytes, too long for a browser to keep in a cookie (at most %d): ask the identity provider for a smaller one", len(tok), auth.MaxCookieToken))
	}
	id, err := ss.sec.authn.Verify(tok)
	if err != nil {
		var ae *auth.Error
		if !errors.As(err, &ae) {
			return echo.NewHTTPError(http.StatusBadRequest, err.Error())
		}
		return ss.fail(c, err)
	}
	ss.setCookie(c, tok, max(1, int(time.Until(id.Expires)/time.Second)), ss.secure(c.Request()))
	return c.JSON(http.StatusOK, ss.reply(id))
}

// show answers for the request's credentials: the cookie, a bearer token, the proxy header, or none when
// anonymous access is on.
func (ss *sessions) show(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	id, err := ss.sec.authn.Authenticate(c.Request())
	if err != nil {
		return ss.fail(c, err)
	}
	return c.JSON(http.StatusOK, ss.reply(id))
}

// remove clears the cookie, under both its names (a hub reached both ways, or whose auth.cookie_secure changed, may
// have set either). It needs no credentials: signing out must work with an expired session too.
func (ss *sessions) remove(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	ss.setCookie(c, "", -1, true)
	if !strings.HasPrefix(ss.cookie, auth.HostCookiePrefix) {
		ss.setCookie(c, "", -1, false)
	}
	return c.NoContent(http.StatusNoContent)
}

// setCookie sets the session cookie: when Secure, under its "__Host-" name, which a browser keeps only from a
// secure origin, with Path=/ and no Domain.
func (ss *sessions) setCookie(c echo.Context, value string, maxAge int, secure bool) {
	name := ss.cookie
	if secure {
		name = auth.HostCookie(name)
	}
	http.SetCookie(c.Response(), &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure})
}

// fail answers a refusal; a 401 also names auth.login_url, where the console sends the operator to sign in.
func (ss *sessions) fail(c echo.Context, err error) error {
	he := ss.sec.refuse(c, err)
	if ss.loginURL == "" || he.Code != http.StatusUnauthorized {
		return he
	}
	return c.JSON(he.Code, map[string]string{"error": fmt.Sprint(he.Message), "login_url": ss.loginURL})
}
