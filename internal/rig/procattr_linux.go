package rig

import (
	"os/exec"
	"syscall"
)

// SetParentDeath makes the kernel kill cmd's process if this one dies first, so no child outlives an aborted run.
func SetParentDeath(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
