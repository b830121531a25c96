//go:build !unix

package experiment

import "os/exec"

func setProcessGroup(*exec.Cmd) {}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}

func terminateGroup(cmd *exec.Cmd) { killGroup(cmd) }
