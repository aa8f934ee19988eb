package auth

import (
	"net/http"
)

// Authenticator turns a request into an Identity. With no Verifier every request is anonymous (and any token it
// carries is ignored); with one, a request without a token is anonymous only when Anonymous is set, and a token
// that is present must verify: a bad token is never downgraded to anonymous access.
type Authenticator struct {
	Verifier  *Verifier
	Anonymous bool
	Extractor Extractor
}

// anonymous may read and write every topic: it exists for development and for hubs behind an authenticating proxy.
var anonymous = Identity{Grant: Grant{Subscribe: []string{"*"}, Publish: []string{"*"}}}

// Authenticate returns who r comes from, or an *Error.
func (a *Authenticator) Authenticate(r *http.Request) (*Identity, error) {
	if a.Verifier == nil {
		id := anonymous
		return &id, nil
	}
	tok, err := a.Extractor.Extract(r)
	if err != nil {
		return nil, err
	}
	if tok == "" {
		if a.Anonymous {
			id := anonymous
			return &id, nil
		}
		return nil, refuse(ReasonNoToken, "authentication required: send a token as \"Authorization: Bearer <token>\" or in the "+a.Extractor.cookie()+" cookie")
	}
	return a.Verifier.Verify(tok)
}
