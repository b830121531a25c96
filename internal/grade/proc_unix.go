//go:build unix

package grade

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the go command in a new process group so that
// cancelling kills the test binary it started too, not only go itself.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
