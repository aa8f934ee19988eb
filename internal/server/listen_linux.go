package server

import (
	"context"
	"net"
	"syscall"
	"time"
)

// Listen opens the hub's listener with TCP_USER_TIMEOUT set to sse.write_timeout; accepted connections inherit it.
// A browser whose machine vanished (power, network) never sends a FIN: without this, a quiet stream's heartbeats sit
// unacknowledged in the kernel for the system's retransmission limit (about 15 minutes) before a write fails. With
// it, data unacknowledged for write_timeout ends the connection, the same promise the per-write deadline makes.
func Listen(ctx context.Context, addr string, userTimeout time.Duration) (net.Listener, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpUserTimeout, int(userTimeout.Milliseconds()))
		})
		if err != nil {
			return err
		}
		return serr
	}}
	return lc.Listen(ctx, "tcp", addr)
}

// tcpUserTimeout is TCP_USER_TIMEOUT from linux/tcp.h (the syscall package does not name it).
const tcpUserTimeout = 0x12
