//go:build !unix

package lab

import "os/exec"

// terminate ends the child run (no SIGTERM here).
func terminate(cmd *exec.Cmd) error { return cmd.Process.Kill() }
