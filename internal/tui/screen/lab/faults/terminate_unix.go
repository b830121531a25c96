//go:build unix

package faults

import (
	"os/exec"
	"syscall"
)

// terminate asks the child run to stop: it stops its replicas and etcd.
func terminate(cmd *exec.Cmd) error { return cmd.Process.Signal(syscall.SIGTERM) }
