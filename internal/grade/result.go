package grade

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Status is the outcome of one test (or step).
type Status string

// The outcomes a test can have.
const (
	Pass   Status = "pass"
	Fail   Status = "fail"
	Skip   Status = "skip"
	NotRun Status = "not run" // build failed, filtered out, or the binary died first
)

// Test is the outcome of one top-level test function, over every repeat of
// a -count run (it failed if any repeat failed).
type Test struct {
	Name    string
	Status  Status
	Runs    int // repeats that finished
	Fails   int // repeats that failed
	Elapsed time.Duration
	// Failure holds the lines the first failing repeat printed (t.Error
	// messages, panics, subtest failures), without go test's framing.
	Failure []string
	// Output holds what the last repeat printed, framing removed.
	Output []string

	finished bool
	current  []string
	subStart map[string]int // subtest name -> index in current where its lines begin
}

// CompileError is one line of compiler output that names a position.
type CompileError struct {
	File string // as the compiler printed it
	Line int
	Col  int // 0 when not printed
	Msg  string
}

func (e CompileError) String() string {
	if e.Col > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// Result is what one run of a lab's tests produced.
type Result struct {
	Tests []*Test // in the order they first ran
	// Passed is true when the package built, the run ended in time, and
	// every test passed (or skipped).
	Passed bool
	// BuildFailed is set when the package or its tests did not compile;
	// BuildOutput is everything the compiler printed and BuildErrors its
	// positioned lines.
	BuildFailed bool
	BuildOutput []string
	BuildErrors []CompileError
	// TimedOut is set when the test binary hit -timeout or the backstop
	// killed the go command.
	TimedOut bool
	// Message is a one-line summary for a learner when the run went wrong
	// as a whole (compile error, timeout, crash); "" otherwise.
	Message string
	// Output holds package-level lines (not printed by a running test).
	Output []string
	// Stderr holds what the go command wrote to standard error.
	Stderr  []string
	Elapsed time.Duration
	// CPU is the processor time the run used (go, the linker and the test
	// binary), which unlike Elapsed does not grow when the machine is busy.
	CPU time.Duration

	byName map[string]*Test
}

// Test returns the named top-level test, or nil.
func (r *Result) Test(name string) *Test {
	return r.byName[name]
}

// event is one line of test2json output (go doc cmd/test2json).
type event struct {
	Action      string
	Package     string
	ImportPath  string
	Test        string
	Elapsed     float64
	Output      string
	FailedBuild string
}

// Parse reads go test -json output. Lines that are not JSON events (a go
// command that failed before testing) are kept as package output.
func Parse(r io.Reader) *Result {
	res := &Result{Passed: true, byName: map[string]*Test{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	pkgFailed := false
	for sc.Scan() {
		line := sc.Bytes()
		var ev event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			if s := strings.TrimRight(string(line), "\r\n"); s != "" {
				res.Output = append(res.Output, s)
			}
			continue
		}
		switch {
		case ev.Action == "build-output":
			res.BuildOutput = append(res.BuildOutput, strings.TrimRight(ev.Output, "\n"))
		case ev.Action == "build-fail":
			res.BuildFailed = true
		case ev.Test == "":
			switch ev.Action {
			case "output":
				res.Output = append(res.Output, strings.TrimRight(ev.Output, "\n"))
			case "fail":
				pkgFailed = true
				if ev.FailedBuild != "" {
					res.BuildFailed = true
				}
			}
		default:
			res.testEvent(ev)
		}
	}
	if pkgFailed {
		res.Passed = false
	}
	return res
}

func (r *Result) testEvent(ev event) {
	top, _, isSub := strings.Cut(ev.Test, "/")
	t := r.byName[top]
	if t == nil {
		t = &Test{Name: top, Status: NotRun}
		r.byName[top] = t
		r.Tests = append(r.Tests, t)
	}
	switch ev.Action {
	case "run":
		if !isSub {
			t.current = nil
			t.subStart = nil
			t.finished = false
		}
	case "output":
		line := strings.TrimRight(ev.Output, "\n")
		switch {
		case isSub && strings.HasPrefix(strings.TrimSpace(line), "=== RUN"):
			if t.subStart == nil {
				t.subStart = map[string]int{}
			}
			t.subStart[ev.Test] = len(t.current)
		case isSub && strings.HasPrefix(strings.TrimSpace(line), "--- FAIL"):
			// go test prints a subtest's verdict after its messages; put
			// it first so the messages read as belonging to it.
			at, ok := t.subStart[ev.Test]
			if !ok || at > len(t.current) {
				at = len(t.current)
			}
			t.current = slices.Insert(t.current, at, strings.TrimSpace(line))
		case !framing(line):
			t.current = append(t.current, line)
		}
	case "pass", "fail", "skip":
		if isSub {
			return
		}
		t.finished = true
		t.Runs++
		t.Elapsed = time.Duration(ev.Elapsed * float64(time.Second))
		t.Output = t.current
		switch ev.Action {
		case "fail":
			t.Fails++
			if t.Failure == nil {
				t.Failure = t.current
				if t.Failure == nil {
					t.Failure = []string{}
				}
			}
			t.Status = Fail
		case "pass":
			if t.Status != Fail {
				t.Status = Pass
			}
		case "skip":
			if t.Status == NotRun {
				t.Status = Skip
			}
		}
	}
}

// framing reports whether a line is go test's own bookkeeping for a
// top-level test rather than something the test printed.
func framing(line string) bool {
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME", "--- PASS", "--- FAIL", "--- SKIP"} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	trimmed := strings.TrimSpace(line)
	return strings.HasPrefix(trimmed, "=== RUN") || strings.HasPrefix(trimmed, "--- PASS") ||
		strings.HasPrefix(trimmed, "=== NAME") || strings.HasPrefix(trimmed, "=== PAUSE") || strings.HasPrefix(trimmed, "=== CONT")
}

var compileLine = regexp.MustCompile(`^(\S+\.go):(\d+)(?::(\d+))?: (.*)$`)

// finish settles what the events alone leave open: unfinished tests,
// timeouts, compile errors, and the summary message.
func (r *Result) finish(timeout time.Duration) {
	for _, line := range r.BuildOutput {
		if m := compileLine.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			ln, _ := strconv.Atoi(m[2])
			col, _ := strconv.Atoi(m[3])
			r.BuildErrors = append(r.BuildErrors, CompileError{File: m[1], Line: ln, Col: col, Msg: m[4]})
		}
	}
	// A go command that failed before building (no such package, bad
	// overlay) prints to the package output or stderr instead.
	if r.BuildFailed || (len(r.Tests) == 0 && len(r.BuildErrors) == 0 && r.anyLine("setup failed", "no Go files", "cannot find", "build failed")) {
		r.BuildFailed = true
		r.Passed = false
		switch {
		case len(r.BuildErrors) > 0:
			r.Message = fmt.Sprintf("does not compile: %s", r.BuildErrors[0])
		default:
			r.Message = "does not compile: " + firstNonEmpty(append(append([]string{}, r.BuildOutput...), append(r.Output, r.Stderr...)...))
		}
		return
	}
	timedOut := r.anyLine("panic: test timed out after")
	var unfinished []string
	for _, t := range r.Tests {
		if t.finished {
			continue
		}
		unfinished = append(unfinished, t.Name)
		t.Status = Fail
		t.Fails++
		t.Failure = append(t.current, "(this test did not finish)")
	}
	for _, t := range r.Tests {
		if t.Status == Fail {
			r.Passed = false
		}
	}
	if len(r.Tests) == 0 && !r.Passed && !timedOut {
		r.Message = "the test binary failed before running any test: " + firstNonEmpty(append(r.Output, r.Stderr...))
	}
	if timedOut {
		r.TimedOut = true
		r.Passed = false
		who := "a test"
		if running := r.runningAtTimeout(); len(running) > 0 {
			who = strings.Join(running, ", ")
		} else if len(unfinished) > 0 {
			who = strings.Join(unfinished, ", ")
		}
		r.Message = fmt.Sprintf("timed out after %v: %s did not finish (an endless loop, or waiting for something that never happens?)", timeout, who)
		return
	}
	if len(unfinished) > 0 && r.Message == "" {
		line := firstWith(r.allLines(), "panic:", "fatal error:")
		r.Message = fmt.Sprintf("the test binary crashed during %s: %s", strings.Join(unfinished, ", "), line)
	}
}

// runningAtTimeout reads the "running tests:" list go test prints when it
// times out.
func (r *Result) runningAtTimeout() []string {
	var names []string
	lines := r.allLines()
	for i, l := range lines {
		if strings.TrimSpace(l) != "running tests:" {
			continue
		}
		for _, next := range lines[i+1:] {
			f := strings.Fields(next)
			if len(f) == 0 || !strings.HasPrefix(f[0], "Test") {
				break
			}
			name, _, _ := strings.Cut(f[0], "/")
			names = append(names, name)
		}
		break
	}
	return names
}

func (r *Result) allLines() []string {
	all := append([]string{}, r.Output...)
	for _, t := range r.Tests {
		all = append(all, t.current...)
		all = append(all, t.Failure...)
	}
	return all
}

func (r *Result) anyLine(subs ...string) bool {
	return firstWith(append(r.allLines(), r.Stderr...), subs...) != ""
}

func firstWith(lines []string, subs ...string) string {
	for _, l := range lines {
		for _, s := range subs {
			if strings.Contains(l, s) {
				return strings.TrimSpace(l)
			}
		}
	}
	return ""
}

func firstNonEmpty(lines []string) string {
	for _, l := range lines {
		if s := strings.TrimSpace(l); s != "" && !strings.HasPrefix(s, "#") {
			return s
		}
	}
	return "(no output)"
}

func splitLines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
