package chaos

import "syscall"

// smallReceiveBuffer sets SO_RCVBUF before the connection is made, so the window it advertises stays small from the
// handshake on (set after connect, the first window already announced a large buffer).
func smallReceiveBuffer(size int) func(network, address string, c syscall.RawConn) error {
	return func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, size)
		})
		if err != nil {
			return err
		}
		return serr
	}
}
