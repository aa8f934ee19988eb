package auth

import "net/http"

// Reason labels a refusal in metrics; it never carries a client's data.
type Reason string

const (
	ReasonNoToken    Reason = "no_token"    // no credentials and anonymous access is off
	ReasonBadToken   Reason = "bad_token"   // malformed, wrongly signed, not yet valid, wrong issuer or audience
	ReasonExpired    Reason = "expired"     // past its exp
	ReasonQueryToken Reason = "query_token" // ?access_token= while auth.allow_query_token is off
	ReasonForbidden  Reason = "forbidden"   // a valid token whose grant does not cover the topic
	ReasonNoKeys     Reason = "no_keys"     // auth.jwks_url has not been fetched yet, so nothing can be verified
)

// Reasons lists every Reason, so a metric can show each at zero.
var Reasons = []Reason{ReasonNoToken, ReasonBadToken, ReasonExpired, ReasonQueryToken, ReasonForbidden, ReasonNoKeys}

// Error is a refused request. Its message is safe to show the client: it never contains the token.
type Error struct {
	Reason Reason
	// Subject is the token's sub when its signature was good (an expired token, a claim that failed), for the
	// refusal's log line; "" otherwise. Never the token itself.
	Subject string
	msg     string
}

func (e *Error) Error() string { return e.msg }

// Status is the HTTP status of the refusal: 403 when the client is known but not allowed, 503 when the hub cannot
// verify any token yet (the client's credentials may be fine), 401 otherwise.
func (e *Error) Status() int {
	switch e.Reason {
	case ReasonForbidden:
		return http.StatusForbidden
	case ReasonNoKeys:
		return http.StatusServiceUnavailable
	}
	return http.StatusUnauthorized
}

func refuse(reason Reason, msg string) *Error { return &Error{Reason: reason, msg: msg} }
