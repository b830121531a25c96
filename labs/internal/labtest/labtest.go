// Package labtest holds what every lab's grader shares: a guard that
// bounds how long a lab's tests may run, so a learner's endless loop or
// deadlock ends with go test's own "test timed out" report (naming the
// test that hung) instead of a terminal that hangs for go test's default
// ten minutes, and so that an init function that never returns is
// reported as such within InitBudget instead of not at all. Bubble runs a
// testing/synctest bubble under a guard of its own: code that keeps the
// fake clock from ever moving (a loop that never waits, a mutex never
// unlocked) is reported after StallBudget with what it is doing and
// where, instead of at the timeout.
package labtest

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// goDefaultTimeout is what go test passes as -test.timeout when the
// learner did not choose one.
const goDefaultTimeout = 10 * time.Minute

// InitBudget is how long the packages of a lab's test binary may take to
// initialize (init functions, package-level variables) before the guard
// stops the binary with a report. The testing package's own -timeout only
// starts once the tests do, so a learner's init that never returns would
// otherwise run into go test's ten-minute kill.
const InitBudget = 20 * time.Second

// initBudgetEnv lowers InitBudget for labtest's own tests.
const initBudgetEnv = "LABTEST_INIT_BUDGET"

// started is set once Run is reached: initialization is over.
var started atomic.Bool

func initBudget() time.Duration {
	if d, err := time.ParseDuration(os.Getenv(initBudgetEnv)); err == nil && d > 0 {
		return d
	}
	return InitBudget
}

// The init guard. It is armed when this package initializes, which is
// before the lab's own package (it imports labtest through its tests or
// the etcd harness), and disarmed by Run. It only acts when the main
// goroutine is still initializing packages, so a test binary of another
// package that imports labtest without calling Run is never touched.
var _ = time.AfterFunc(initBudget(), func() {
	if started.Load() {
		return
	}
	stack, ok := initStack()
	if !ok {
		return
	}
	fmt.Fprintf(os.Stderr, "labtest: the lab's package did not finish initializing within %v: an init function or a package-level variable never returns, so no step could start.\n", initBudget())
	if stack != "" {
		fmt.Fprintf(os.Stderr, "Where initialization is stuck:\n%s\n", stack)
	}
	os.Exit(2)
})

// initStack returns the main goroutine's stack and whether it is still
// running package initializers.
func initStack() (string, bool) {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if !bytes.HasPrefix(g, []byte("goroutine 1 [")) {
			continue
		}
		// Before initialization ends, main.main is not on the main
		// goroutine's stack (and the initializers' frames are).
		s := string(g)
		return s, !strings.Contains(s, "main.main(")
	}
	return "", false
}

// Main runs the tests and exits with their status. When the timeout is go
// test's default, it lowers it to perRun times -count; a timeout chosen on
// the command line (as the playground's grader does) is left alone.
func Main(m *testing.M, perRun time.Duration) {
	os.Exit(Run(m, perRun))
}

// Run is Main without the exit, for a TestMain that has more to do after
// the tests (the etcd harness stops its server): it sets the timeout as
// Main does, disarms the init guard and returns m.Run's status.
func Run(m *testing.M, perRun time.Duration) int {
	started.Store(true)
	if !flag.Parsed() {
		flag.Parse()
	}
	if f := flag.Lookup("test.timeout"); f != nil {
		if d, err := time.ParseDuration(f.Value.String()); err == nil && d == goDefaultTimeout {
			count := 1
			if c := flag.Lookup("test.count"); c != nil {
				if g, ok := c.Value.(flag.Getter); ok {
					if n, ok := g.Get().(uint); ok && n > 1 {
						count = int(n)
					}
				}
			}
			_ = f.Value.Set((perRun * time.Duration(count)).String())
		}
	}
	if seal == nil || !seal.watch(m) {
		return m.Run()
	}
	code := m.Run()
	seal.report(code)
	return code
}
