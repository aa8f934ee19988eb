//go:build !linux

package chaos

import (
	"os/exec"
	"syscall"
)

// setParentDeath has no portable equivalent; the tests' cleanups stop the hubs.
func setParentDeath(*exec.Cmd) {}

// smallReceiveBuffer is left to SetReadBuffer after the connection is made.
func smallReceiveBuffer(int) func(network, address string, c syscall.RawConn) error { return nil }
