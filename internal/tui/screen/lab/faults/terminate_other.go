//go:build !unix

package faults

import "os/exec"

// terminate ends the child run (no SIGTERM here).
func terminate(cmd *exec.Cmd) error { return cmd.Process.Kill() }
