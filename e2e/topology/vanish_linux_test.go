//go:build slow

package topology

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/rig"
)

// A browser whose machine vanishes sends no FIN. The test puts a client on a test host of its own (a network
// namespace joined by a veth pair), opens a quiet stream, then takes the client's link down and kills it: no FIN, no
// RST ever reaches the hub. Its next unacknowledged heartbeat must end the connection within about write_timeout
// (TCP_USER_TIMEOUT), not after the kernel's quarter-hour of retransmissions.
func TestVanishedClientWithoutFIN(t *testing.T) {
	if os.Geteuid() != 0 {
		rig.Unavailable(t, "root", "network namespaces need root: a vanished client is not checked", "sudo -E go test -run TestVanishedClientWithoutFIN .")
	}
	rig.Optional(t, "ip", "a vanished client is not checked", "apt-get install -y iproute2")
	ns := fmt.Sprintf("hubv%d", os.Getpid()%100000)
	hostIf, clientIf := ns+"a", ns+"b"
	octet := 16 + os.Getpid()%200
	hostIP, clientIP := fmt.Sprintf("10.203.%d.1", octet), fmt.Sprintf("10.203.%d.2", octet)
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	ip("netns", "add", ns)
	t.Cleanup(func() {
		_ = exec.Command("ip", "netns", "del", ns).Run()
		_ = exec.Command("ip", "link", "del", hostIf).Run()
	})
	ip("link", "add", hostIf, "type", "veth", "peer", "name", clientIf)
	ip("link", "set", clientIf, "netns", ns)
	ip("addr", "add", hostIP+"/30", "dev", hostIf)
	ip("link", "set", hostIf, "up")
	ip("netns", "exec", ns, "ip", "addr", "add", clientIP+"/30", "dev", clientIf)
	ip("netns", "exec", ns, "ip", "link", "set", clientIf, "up")

	rs := rig.StartRedis(t)
	h := hubtest.StartOn(t, rs, hostIP+":0", "HUB_AUTH_ANONYMOUS=true", "HUB_SSE_HEARTBEAT=500ms", "HUB_SSE_WRITE_TIMEOUT=2s")
	curl := exec.Command("ip", "netns", "exec", ns, "curl", "-sN", h.URL+"/events?topic=vanish&last_event_id=0-0")
	curl.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := curl.Start(); err != nil {
		t.Fatalf("start curl in %s: %v", ns, err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-curl.Process.Pid, syscall.SIGKILL); _ = curl.Wait() })
	rig.WaitMetric(t, h.URL, 1, 10*time.Second, "hub_sse_connections_active")

	ip("netns", "exec", ns, "ip", "link", "set", clientIf, "down") // from now on nothing of the client's gets out
	_ = syscall.Kill(-curl.Process.Pid, syscall.SIGKILL)
	gone := time.Now()
	rig.Eventually(t, 20*time.Second, "the vanished client's stream closed (heartbeat 500ms, write_timeout 2s)", func() bool {
		v, _ := rig.MetricValue(rig.Scrape(t, h.URL), "hub_sse_connections_active")
		return v == 0
	})
	took := time.Since(gone)
	t.Logf("the vanished client's stream was closed %v after it vanished", took.Round(10*time.Millisecond))
	if took > 8*time.Second {
		t.Errorf("closed after %v, want about heartbeat + write_timeout (2.5s), well under the kernel's retransmission limit", took)
	}
}
