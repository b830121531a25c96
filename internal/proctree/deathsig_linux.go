package proctree

import (
	"os/exec"
	"syscall"
)

// DieWithParent asks the kernel to send sig to cmd, not yet started, when
// this process dies, even killed with SIGKILL: no orphan keeps running.
// The signal is the caller's choice: SIGKILL for a child with nothing to
// clean up, SIGTERM for one that stops what it started itself.
func DieWithParent(cmd *exec.Cmd, sig syscall.Signal) {
	attr(cmd).Pdeathsig = sig
}
