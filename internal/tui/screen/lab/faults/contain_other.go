//go:build !linux

package faults

import "os/exec"

// containChild: only Linux can tie a child's life to its parent's; the
// child is stopped by Close (cmd.Cancel) elsewhere.
func containChild(cmd *exec.Cmd) {}
