//go:build !linux

package grade

import (
	"fmt"
	"os"
	"os/exec"
)

const supervisorSupported = false

func superviseMain(args []string, limit int64) int {
	fmt.Fprintln(os.Stderr, "playground-supervisor: only on Linux")
	return 2
}

func supervisedCommand(cmd *exec.Cmd, limit int64) (started, done func(), err error) {
	return func() {}, func() {}, nil
}

// KeepDescendants does nothing outside Linux (no subreapers).
func KeepDescendants() (end func()) { return func() {} }
