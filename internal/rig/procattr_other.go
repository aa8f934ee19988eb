//go:build !linux

package rig

import "os/exec"

// SetParentDeath has no portable equivalent elsewhere; the owners' cleanups stop the children.
func SetParentDeath(*exec.Cmd) {}
