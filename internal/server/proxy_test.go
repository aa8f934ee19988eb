package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/auth"
	"github.com/syncverse/hub/internal/rig"
)

// auth.proxy_header, over real HTTP: believed from an address in limits.trusted_proxies (the test's 127.0.0.1),
// ignored from any other, where the request is as anonymous as if it carried nothing.
func TestProxyHeaderOnlyFromTrustedProxies(t *testing.T) {
	rs := rig.StartRedis(t)
	tok := signToken(t, auth.Grant{Subscribe: []string{"project.*"}}, time.Hour)
	hdr := http.Header{"X-Forwarded-Access-Token": {tok}}
	for _, c := range []struct {
		trusted string
		status  int
		errHas  string
	}{
		{"127.0.0.1", http.StatusOK, ""},
		{"10.0.0.0/8", http.StatusUnauthorized, "authentication required"},
	} {
		h, _ := secureEdge(t, rs, "HUB_AUTH_PROXY_HEADER=X-Forwarded-Access-Token", "HUB_LIMITS_TRUSTED_PROXIES="+c.trusted)
		if r := do(t, h.URL, call{path: "/topics/project.1/history", header: hdr}); r.status != c.status || (c.errHas != "" && !strings.Contains(r.msg, c.errHas)) {
			t.Errorf("trusted_proxies %s: GET with the proxy header = %d %q, want %d %q", c.trusted, r.status, r.msg, c.status, c.errHas)
		}
	}
}
