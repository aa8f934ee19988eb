package hubtest

import (
	"cmp"
	"net"
	"os/exec"
	"strconv"
	"testing"

	"github.com/syncverse/hub/internal/testutil"
)

// NeedTool skips the test when a program is missing, and fails it when CI is set: CI installs it.
func NeedTool(t testing.TB, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			pkg := map[string]string{"redis-cli": "redis-tools", "go": "golang"}[n]
			testutil.Missing(t, n, "this test runs it", "apt-get install -y "+cmp.Or(pkg, n))
		}
	}
}

// FreeBusPort returns a loopback port that was free a moment ago, below 55535 so that port+10000 (a cluster node's
// bus port) exists too, and with that one free as well.
func FreeBusPort(t testing.TB) int {
	t.Helper()
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("find a free port: %v", err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if p+10000 > 65535 {
			continue
		}
		if bus, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+10000)); err == nil {
			bus.Close()
			return p
		}
	}
	t.Fatalf("no free port pair found")
	return 0
}
