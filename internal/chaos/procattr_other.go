//go:build !linux

package chaos

import "syscall"

// smallReceiveBuffer is left to SetReadBuffer after the connection is made.
func smallReceiveBuffer(int) func(network, address string, c syscall.RawConn) error { return nil }
