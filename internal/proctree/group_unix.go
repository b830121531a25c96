//go:build unix

package proctree

import (
	"os/exec"
	"syscall"
)

// Group puts cmd, not yet started, in a new process group whose id is
// its pid, so that what it starts (and does not move out) can be
// signalled with it.
func Group(cmd *exec.Cmd) {
	attr(cmd).Setpgid = true
}

// KillGroupOnCancel makes the end of cmd's context kill its whole group
// with SIGKILL, not only cmd; cmd must be in a Group of its own.
func KillGroupOnCancel(cmd *exec.Cmd) {
	cmd.Cancel = func() error { return KillGroup(cmd) }
}

// SignalGroup sends sig to cmd's process group; nothing when cmd has not
// started.
func SignalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, sig)
}

// KillGroup ends cmd's process group with SIGKILL: what is left of it
// once cmd ended, or all of it.
func KillGroup(cmd *exec.Cmd) error { return SignalGroup(cmd, syscall.SIGKILL) }

// attr is cmd's SysProcAttr, made if it has none.
func attr(cmd *exec.Cmd) *syscall.SysProcAttr {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	return cmd.SysProcAttr
}
