package grade

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/ownership-election/playground/internal/grade/guard"
	"github.com/ownership-election/playground/internal/proctree"
)

// Containment. On Linux a grading's go command runs under a supervisor,
// the guard program (internal/grade/guard) started as a child subreaper:
// every process the grading starts stays its descendant, is killed when
// the grading ends, is stopped, or the program that started it dies, and
// counts against one memory limit. Nothing here changes the state of the
// program that grades: the subreaper flag and the polling belong to the
// supervisor process.

// DefaultMemoryLimit is how much resident memory a grading's test
// binaries may use together.
const DefaultMemoryLimit = 1 << 30

// supervising is set by Supervise in a program that contains its
// gradings.
var supervising atomic.Bool

// Supervise makes this program contain the gradings it runs and judge
// its sealed ones: call it first thing in main (and in TestMain of tests
// that grade). A program that never calls it grades without containment
// (each go command in a process group of its own, as before) and cannot
// grade sealed. The supervisor, the judge and the sandbox step are the
// guard program's (guard.go), which this program builds the first time
// it grades; it returns at once.
func Supervise() {
	supervising.Store(guard.Supported)
	judging.Store(true)
}

// supervisedCommand turns cmd, the go command ready to start, into its
// supervisor's command: the guard program with guard.SupervisorEnv set
// and the go command as its arguments, reading a pipe on standard input
// that only closes when the grading is over or this program dies.
// Cancelling asks the supervisor to end everything (SIGTERM). started is
// called once the supervisor runs, done once it was waited for.
func supervisedCommand(cmd *exec.Cmd, goCmd string, limit int64) (started, done func(), err error) {
	prog, err := guardProgram(goCmd)
	if err != nil {
		return nil, nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("supervise: %w", err)
	}
	cmd.Args = append([]string{prog, cmd.Path}, cmd.Args[1:]...)
	cmd.Path = prog
	cmd.Env = append(cmd.Env, guard.SupervisorEnv+"="+strconv.FormatInt(limit, 10))
	cmd.Stdin = r
	proctree.Group(cmd)
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return cmd.Process.Signal(syscall.SIGTERM)
	}
	return func() { r.Close() }, func() { w.Close() }, nil
}

// KeepDescendants makes this process the subreaper of everything it
// starts from now on: a process whose parent ends (a supervisor killed,
// a daemon that double-forked) is reparented here instead of to init.
// The returned end kills and reaps every descendant left. Only for a
// process that exists to grade (class verify's regrade child): it ends
// all its descendants, whoever started them. Outside Linux it does
// nothing.
func KeepDescendants() (end func()) { return guard.KeepDescendants() }

// memoryMessage is what a run stopped for its memory says.
func memoryMessage(limit int64) string {
	return fmt.Sprintf("your code used more than %s of memory (the limit while grading), so the run was stopped: look for a loop that keeps allocating, or data that grows without bound", byteSize(limit))
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}

// overLimit reports whether the supervisor's stderr says it stopped the
// run for its memory.
func overLimit(stderr string) bool {
	return strings.Contains(stderr, guard.OverMemory)
}
