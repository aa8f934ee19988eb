package auth

import (
	"errors"
	"net/http"
	"strings"
)

// MaxCookieToken is the longest token a session cookie can hold: browsers keep cookies of up to 4096 bytes,
// name and attributes included.
const MaxCookieToken = 3800

// SessionToken returns the token a sign-in request carries: in the Authorization header ("Bearer <token>"), or
// else in the form field token (URL-encoded or multipart, at most maxForm bytes). It is "" when there is none.
func SessionToken(r *http.Request, maxForm int64) (string, error) {
	if h := r.Header.Values("Authorization"); len(h) > 0 {
		return bearer(h)
	}
	r.Body = http.MaxBytesReader(nil, r.Body, maxForm)
	if err := r.ParseMultipartForm(maxForm); err != nil && !errors.Is(err, http.ErrNotMultipart) {
		return "", refuse(ReasonBadToken, "unreadable form: "+err.Error())
	}
	switch v := r.PostForm["token"]; len(v) {
	case 0:
		return "", nil
	case 1:
		return checkShape(strings.TrimSpace(v[0]))
	}
	return "", refuse(ReasonBadToken, "several token fields")
}

// Verify checks a token given outright, as a sign-in does, with the same rules as one found in a request. With no
// Verifier there is nothing to sign in to.
func (a *Authenticator) Verify(tok string) (*Identity, error) {
	if a.Verifier == nil {
		return nil, errors.New("this hub has no auth configured (every client is anonymous): there is no session to sign in to")
	}
	return a.Verifier.Verify(tok)
}
