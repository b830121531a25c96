//go:build unix

package labrun

import (
	"os/exec"
	"syscall"
)

// setProcessGroup lets a cancelled build end the compilers go started too.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
