//go:build !linux

package grade

import "os/exec"

// sandboxedCommand runs the test binary itself: only Linux has Landlock.
func sandboxedCommand(args []string, tmp string) (*exec.Cmd, error) {
	return plainCommand(args, tmp), nil
}

func sandboxMain(args []string, spec string) int { return 2 }

// SandboxNote says that lab code runs unsandboxed here.
func SandboxNote() string {
	return "outside Linux there is no sandbox around lab code: it runs with your user's access to files and the network; only the import allowlist guards the grade"
}

const sandboxEnv = "PLAYGROUND_GRADE_SANDBOX"
