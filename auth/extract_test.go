package auth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const sampleJWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"

func TestExtract(t *testing.T) {
	cases := []struct {
		name       string
		header     []string
		cookie     string
		query      string
		allowQuery bool
		want       string
		reason     Reason // "" when no error
	}{
		{name: "nothing"},
		{name: "bearer", header: []string{"Bearer " + sampleJWT}, want: sampleJWT},
		{name: "bearer lower case", header: []string{"bearer " + sampleJWT}, want: sampleJWT},
		{name: "basic", header: []string{"Basic dXNlcjpwdw=="}, reason: ReasonBadToken},
		{name: "bearer alone", header: []string{"Bearer"}, reason: ReasonBadToken},
		{name: "two headers", header: []string{"Bearer " + sampleJWT, "Bearer " + sampleJWT}, reason: ReasonBadToken},
		{name: "cookie", cookie: sampleJWT, want: sampleJWT},
		{name: "header wins over cookie", header: []string{"Bearer " + sampleJWT}, cookie: "a.b.c", want: sampleJWT},
		{name: "query when off", query: "access_token=" + sampleJWT, reason: ReasonQueryToken},
		{name: "query when off beside a header", header: []string{"Bearer " + sampleJWT}, query: "access_token=" + sampleJWT, reason: ReasonQueryToken},
		{name: "query when on", query: "access_token=" + sampleJWT, allowQuery: true, want: sampleJWT},
		{name: "two query tokens", query: "access_token=a.b.c&access_token=a.b.c", allowQuery: true, reason: ReasonBadToken},
		{name: "two parts", header: []string{"Bearer a.b"}, reason: ReasonBadToken},
		{name: "padding", header: []string{"Bearer a.b.c="}, reason: ReasonBadToken},
		{name: "CR LF", query: "access_token=a.b.c%0D%0AX", allowQuery: true, reason: ReasonBadToken},
		{name: "NUL in the cookie: net/http drops the cookie", cookie: "a.b\x00.c"},
		{name: "NUL in the header", header: []string{"Bearer a.b\x00.c"}, reason: ReasonBadToken},
		{name: "huge", header: []string{"Bearer a.b." + strings.Repeat("c", MaxTokenBytes)}, reason: ReasonBadToken},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/events?topic=a&"+c.query, nil)
			r.Header["Authorization"] = c.header
			if c.cookie != "" {
				r.Header.Set("Cookie", DefaultCookie+"="+c.cookie)
			}
			got, err := Extractor{AllowQuery: c.allowQuery}.Extract(r)
			var ae *Error
			switch {
			case c.reason == "" && (err != nil || got != c.want):
				t.Errorf("Extract = %q, %v, want %q", got, err, c.want)
			case c.reason != "" && (!errors.As(err, &ae) || ae.Reason != c.reason || ae.Status() != 401):
				t.Errorf("Extract = %q, %v, want a 401 %s", got, err, c.reason)
			}
		})
	}
}

// FuzzExtract: whatever a request carries, Extract returns a well-shaped token taken from the request, nothing, or
// a 401, and never the token in its error message.
func FuzzExtract(f *testing.F) {
	f.Add("Bearer "+sampleJWT, "", "", false)
	f.Add("", sampleJWT, "", false)
	f.Add("", "", "access_token="+sampleJWT, true)
	f.Add("Bearer  a.b.c ", "x", "access_token=%00", true)
	f.Fuzz(func(t *testing.T, header, cookie, query string, allowQuery bool) {
		r := httptest.NewRequest(http.MethodGet, "/events", nil)
		r.URL.RawQuery = query
		if header != "" {
			r.Header["Authorization"] = []string{header}
		}
		if cookie != "" {
			r.Header["Cookie"] = []string{"hub_token=" + cookie}
		}
		tok, err := Extractor{AllowQuery: allowQuery}.Extract(r)
		if err != nil {
			var ae *Error
			if !errors.As(err, &ae) || ae.Status() != 401 || tok != "" {
				t.Fatalf("Extract = %q, %v: want a 401 *Error and no token", tok, err)
			}
			if len(header) > 12 && strings.Contains(err.Error(), header) {
				t.Fatalf("error %q repeats the credentials", err)
			}
			return
		}
		if tok == "" {
			return
		}
		if _, err := checkShape(tok); err != nil {
			t.Fatalf("Extract = %q, which is not a compact JWS", tok)
		}
		if !strings.Contains(header, tok) && !strings.Contains(cookie, tok) && !(allowQuery && r.URL.Query().Get("access_token") == tok) {
			t.Fatalf("Extract = %q, which the request did not carry", tok)
		}
	})
}

func TestAuthenticate(t *testing.T) {
	v := testVerifier(t)
	tok := signHS(t, testSecret, validClaims(Grant{Subscribe: []string{"a"}}))
	bearer := func(tok string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		if tok != "" {
			r.Header.Set("Authorization", "Bearer "+tok)
		}
		return r
	}
	cases := []struct {
		name   string
		a      Authenticator
		r      *http.Request
		reason Reason
		anon   bool
	}{
		{"no verifier: anonymous", Authenticator{}, bearer("x"), "", true},
		{"no token, anonymous off", Authenticator{Verifier: v}, bearer(""), ReasonNoToken, false},
		{"no token, anonymous on", Authenticator{Verifier: v, Anonymous: true}, bearer(""), "", true},
		{"bad token, anonymous on", Authenticator{Verifier: v, Anonymous: true}, bearer("a.b.c"), ReasonBadToken, false},
		{"good token", Authenticator{Verifier: v}, bearer(tok), "", false},
	}
	for _, c := range cases {
		id, err := c.a.Authenticate(c.r)
		var ae *Error
		switch {
		case c.reason != "" && (!errors.As(err, &ae) || ae.Reason != c.reason):
			t.Errorf("%s: Authenticate = %v, want %s", c.name, err, c.reason)
		case c.reason == "" && err != nil:
			t.Errorf("%s: Authenticate = %v, want an identity", c.name, err)
		case c.reason == "" && id.Grant.CanPublish("zzz") != c.anon:
			t.Errorf("%s: anonymous = %v, want %v", c.name, !c.anon, c.anon)
		}
	}
}
