package cli

import (
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/ownership-election/playground/internal/proctree"
)

// limitCPU caps the CPU seconds of process pid (and of what it starts
// from now on): a regrade of a learner's busy loop ends instead of
// running for its whole wall-clock limit on every core.
func limitCPU(pid int, seconds uint64) {
	lim := unix.Rlimit{Cur: seconds, Max: seconds}
	_ = unix.Prlimit(pid, unix.RLIMIT_CPU, &lim, nil) // best effort: the wall clock still bounds it
}

// ownGroup starts cmd in a process group of its own, killed whole when
// its context ends, and killed if this process dies first.
func ownGroup(cmd *exec.Cmd) {
	proctree.Group(cmd)
	proctree.DieWithParent(cmd, syscall.SIGKILL)
	proctree.KillGroupOnCancel(cmd)
}

// killGroup ends what is left of cmd's process group.
func killGroup(cmd *exec.Cmd) { _ = proctree.KillGroup(cmd) }
