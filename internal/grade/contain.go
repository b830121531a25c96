package grade

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
)

// Containment. On Linux a grading's go command runs under a supervisor:
// this same program started again (see Supervise) as a child subreaper, so
// that every process the grading starts stays its descendant even when it
// calls setsid or its parent exits. When the go command ends, when the
// grading is stopped, or when the program that started it dies (even by
// kill -9: the supervisor's standard input closes), the supervisor kills
// every process left, removes the private temporary folder it gave the
// run ($TMPDIR: etcd data, test files) and exits. It also stops the run
// when the resident memory of all the processes that run the learner's
// code (labMemory: the test binary and whatever it started) passes the
// limit. Nothing here changes the state of the program that grades: the
// subreaper flag and the polling belong to the supervisor process.
const (
	supervisorEnv = "PLAYGROUND_GRADE_SUPERVISOR" // the memory limit in bytes
	// overMemory begins the line the supervisor writes on standard error
	// when it stopped a run for its memory.
	overMemory = "playground-supervisor: over the memory limit: "
)

// DefaultMemoryLimit is how much resident memory a grading's test
// binaries may use together.
const DefaultMemoryLimit = 1 << 30

// supervising is set by Supervise in a program that can be its own
// supervisor.
var supervising atomic.Bool

// Supervise makes this program able to contain the gradings it runs: call
// it first thing in main (and in TestMain of tests that grade). When the
// program was started as a grading's supervisor, Supervise runs the
// supervision and exits; otherwise it returns at once. A program that
// never calls it grades without containment (each go command in a process
// group of its own, as before).
//
// The same program is also a sealed run's judge and the step that puts
// its test binary in the sandbox (judge.go, sandbox_linux.go): the go
// command runs the binary through it.
func Supervise() {
	if limit, ok := os.LookupEnv(supervisorEnv); ok {
		n, _ := strconv.ParseInt(limit, 10, 64)
		os.Exit(superviseMain(os.Args[1:], n))
	}
	if spec, ok := os.LookupEnv(sandboxEnv); ok {
		os.Exit(sandboxMain(os.Args[1:], spec))
	}
	if key, ok := os.LookupEnv(judgeEnv); ok {
		os.Exit(judgeMain(os.Args[1:], key))
	}
	supervising.Store(supervisorSupported)
	judging.Store(true)
}

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
	return strings.Contains(stderr, overMemory)
}
