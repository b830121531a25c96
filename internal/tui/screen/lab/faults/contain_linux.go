package faults

import (
	"os/exec"
	"syscall"
)

// containChild makes the child run end with the playground, even killed
// with -9: the kernel sends it SIGTERM when its parent dies.
func containChild(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
