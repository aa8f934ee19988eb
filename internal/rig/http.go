package rig

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// Bearer is the Authorization header carrying tok.
func Bearer(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }

// WaitZero polls base's /metrics (with token, when not empty) until every named gauge is 0: nothing was left behind.
func WaitZero(t testing.TB, base, token string, names ...string) {
	t.Helper()
	Eventually(t, 3*time.Second, fmt.Sprintf("%v back to 0 (or something was left behind)", names), func() bool {
		fams := ScrapeWith(t, base, token)
		for _, n := range names {
			if v, _ := MetricValue(fams, n); v != 0 {
				return false
			}
		}
		return true
	})
}

// FreeAddr returns a loopback address nothing listens on right now.
func FreeAddr(t testing.TB) string {
	t.Helper()
	a, err := LoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	return a
}
