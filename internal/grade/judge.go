package grade

import (
	"fmt"
	"strings"
	"sync/atomic"
)

// The judge. A sealed run's test binary holds no key: the go command runs
// it through the guard program (go test -exec; internal/grade/guard,
// judge.go), which starts it, inside the sandbox where there is one, with
// a pipe its harness writes the unsigned report on, and signs that
// report with the run's key once the binary has ended. The key lives in
// the grader, the supervisor, the go command and the judge, none of
// which runs the learner's code.

// judging is set by Supervise: this program can judge a sealed run.
var judging atomic.Bool

// judgeArgs are the go test flags that run the test binary through the
// guard program, or an error when it cannot judge.
func judgeArgs(goCmd string) ([]string, error) {
	if !judging.Load() {
		return nil, fmt.Errorf("a sealed grading needs grade.Supervise() at the start of main")
	}
	prog, err := guardProgram(goCmd)
	if err != nil {
		return nil, err
	}
	return []string{"-exec", quoteArg(prog)}, nil
}

// quoteArg quotes s for the go command's -exec, which splits on spaces.
func quoteArg(s string) string {
	if !strings.ContainsAny(s, " \t'\"") {
		return s
	}
	if !strings.Contains(s, "'") {
		return "'" + s + "'"
	}
	return `"` + s + `"`
}
