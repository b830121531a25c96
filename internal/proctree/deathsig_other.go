//go:build !linux

package proctree

import (
	"os/exec"
	"syscall"
)

// DieWithParent does nothing here: only Linux ties a child's life to its
// parent's.
func DieWithParent(cmd *exec.Cmd, sig syscall.Signal) {}
