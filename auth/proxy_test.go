package auth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

// The proxy header is read only from a request a trusted proxy sent; from anyone else it is ignored, as if absent.
func TestExtractProxyHeader(t *testing.T) {
	const hdr = "X-Forwarded-Access-Token"
	cases := []struct {
		name    string
		trusted bool
		proxy   []string
		auth    string
		cookie  string
		want    string
		reason  Reason
	}{
		{name: "from the proxy", trusted: true, proxy: []string{sampleJWT}, want: sampleJWT},
		{name: "from the proxy, with Bearer", trusted: true, proxy: []string{"Bearer " + sampleJWT}, want: sampleJWT},
		{name: "from the proxy, over the cookie and the header", trusted: true, proxy: []string{sampleJWT}, auth: "Bearer x.y.z", cookie: "a.b.c", want: sampleJWT},
		{name: "from an untrusted address: ignored", proxy: []string{sampleJWT}},
		{name: "from an untrusted address: the cookie counts", proxy: []string{sampleJWT}, cookie: "a.b.c", want: "a.b.c"},
		{name: "from the proxy, twice", trusted: true, proxy: []string{sampleJWT, sampleJWT}, reason: ReasonBadToken},
		{name: "from the proxy, malformed", trusted: true, proxy: []string{"opaque"}, reason: ReasonBadToken},
		{name: "from an untrusted address, malformed: ignored", proxy: []string{"opaque"}},
	}
	for _, c := range cases {
		r := httptest.NewRequest(http.MethodGet, "/events", nil)
		r.Header[hdr] = c.proxy
		if c.auth != "" {
			r.Header.Set("Authorization", c.auth)
		}
		if c.cookie != "" {
			r.Header.Set("Cookie", DefaultCookie+"="+c.cookie)
		}
		x := Extractor{ProxyHeader: hdr, FromProxy: func(*http.Request) bool { return c.trusted }}
		got, err := x.Extract(r)
		var ae *Error
		switch {
		case c.reason == "" && (err != nil || got != c.want):
			t.Errorf("%s: Extract = %q, %v, want %q", c.name, got, err, c.want)
		case c.reason != "" && (!errors.As(err, &ae) || ae.Reason != c.reason):
			t.Errorf("%s: Extract = %q, %v, want a %s refusal", c.name, got, err, c.reason)
		}
	}
}
