//go:build !unix

package labrun

import "os/exec"

func setReplicaGroup(*exec.Cmd) {}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}

func terminateGroup(cmd *exec.Cmd) { killGroup(cmd) }
