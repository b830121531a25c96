//go:build !unix

package proctree

import (
	"os/exec"
	"syscall"
)

// Group does nothing here: there are no process groups.
func Group(cmd *exec.Cmd) {}

// KillGroupOnCancel keeps exec's default: the end of the context kills
// cmd only.
func KillGroupOnCancel(cmd *exec.Cmd) {}

// SignalGroup kills cmd itself, the only member of its "group" here;
// nothing when cmd has not started.
func SignalGroup(cmd *exec.Cmd, sig syscall.Signal) error { return KillGroup(cmd) }

// KillGroup kills cmd itself; nothing when cmd has not started.
func KillGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}
