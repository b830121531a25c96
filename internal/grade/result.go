package grade

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/sanitize"
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
	// Summary is what to read first about a failure: for each failing
	// subtest its title and first failing line, else the test's first
	// failing line; what the test logged (t.Log) is never one of them.
	// When it says more than Failure's first line, Failure starts with it.
	Summary []string
	// Output holds what the last repeat printed, framing removed.
	Output []string
	// Repeats holds each finished repeat's outcome, in order (what a
	// -count run needs to tell "failed every time" from "failed once").
	Repeats []Status
	// Subtests are the subtests (at any depth: "TestX/a/b", as go test
	// -run names them) that ran, in the order they first ran; one failed
	// when any repeat of it failed.
	Subtests []Subtest

	finished bool
	started  bool // a repeat began (run event) and has not ended
	verdict  bool // the testing package printed "--- PASS/FAIL/SKIP: Name" for this repeat
	current  lineBuf
	subStart map[string]int // subtest name -> index in current where its lines begin
	subIndex map[string]int // subtest name -> index in Subtests
}

// Subtest is one subtest's outcome over every repeat.
type Subtest struct {
	Name   string
	Status Status
}

// Subtest returns the named subtest ("TestX/a") of t, or nil.
func (t *Test) Subtest(name string) *Subtest {
	if i, ok := t.subIndex[name]; ok {
		return &t.Subtests[i]
	}
	return nil
}

// subEvent records a subtest's run and its outcome.
func (t *Test) subEvent(name, action string) {
	if t.subIndex == nil {
		t.subIndex = map[string]int{}
	}
	i, ok := t.subIndex[name]
	if !ok {
		i = len(t.Subtests)
		t.subIndex[name] = i
		t.Subtests = append(t.Subtests, Subtest{Name: name, Status: NotRun})
	}
	st := &t.Subtests[i]
	switch {
	case action != "run" && action != "pass" && action != "fail" && action != "skip":
	case action == "fail":
		st.Status = Fail
	case action == "pass" && st.Status != Fail:
		st.Status = Pass
	case action == "skip" && st.Status == NotRun:
		st.Status = Skip
	}
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
	// Completed is set when the test binary reached its end and said so
	// (the testing package's final PASS or FAIL line). A binary that
	// exited early (os.Exit, syscall.Exit, a signal) never prints it, and
	// then no step it was running counts as passed.
	Completed bool
	// Started is set once the test binary was started (the build is done).
	Started bool

	byName    map[string]*Test
	sealKey   []byte      // set on a sealed run (seal.go)
	sealed    *sealReport // the harness's report, once one signed with sealKey came
	output    lineBuf     // package-level lines
	build     lineBuf
	pkgFailed bool
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
// command that failed before testing) are kept as package output. What
// any one test printed is kept only in part (its first and last lines),
// so a test printing without end costs bounded memory.
func Parse(r io.Reader) *Result {
	res := newResult()
	readLines(r, res.feed)
	res.settle()
	return res
}

func newResult() *Result {
	return &Result{Passed: true, byName: map[string]*Test{}}
}

// readLines calls f with every line of r, without its newline. A line
// longer than the reader's buffer is cut (the rest is skipped), so one
// endless line cannot exhaust memory either.
func readLines(r io.Reader, f func([]byte)) {
	br := bufio.NewReaderSize(r, 256<<10)
	var long []byte
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case err == bufio.ErrBufferFull:
			if long == nil {
				long = append([]byte{}, chunk...)
			}
			continue
		case long != nil:
			// The end of an over-long line: give what was kept.
			f(long)
			long = nil
			if err != nil {
				return
			}
			continue
		}
		if len(chunk) > 0 {
			f(bytes.TrimRight(chunk, "\r\n"))
		}
		if err != nil {
			return
		}
	}
}

// feed takes one line of go test -json output.
func (res *Result) feed(line []byte) {
	var ev event
	if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
		if s := strings.TrimRight(string(line), "\r\n"); s != "" {
			res.output.add(sanitize.Text(s))
		}
		return
	}
	// Everything below comes from the learner's code or its build: no
	// escape sequence of it reaches a report, the TUI or a class board.
	ev.Test, ev.Output = sanitize.Line(ev.Test), sanitize.Text(ev.Output)
	if ev.Action == "output" {
		res.checkSeal(ev.Output)
	}
	switch {
	case ev.Action == "build-output":
		res.build.add(strings.TrimRight(ev.Output, "\n"))
	case ev.Action == "build-fail":
		res.BuildFailed = true
	case ev.Test == "":
		switch ev.Action {
		case "start":
			res.Started = true
		case "output":
			line := strings.TrimRight(ev.Output, "\n")
			// The testing package's own last line; test2json gives it to
			// the package only when the binary printed it framed, so
			// a test printing "PASS" does not count.
			if line == "PASS" || line == "FAIL" {
				res.Completed = true
			}
			res.output.add(line)
		case "fail":
			res.pkgFailed = true
			if ev.FailedBuild != "" {
				res.BuildFailed = true
			}
		}
	default:
		res.testEvent(ev)
	}
}

// settle fills the exported slices from what was kept while parsing.
func (res *Result) settle() {
	res.Output = res.output.lines()
	res.BuildOutput = res.build.lines()
	if res.pkgFailed {
		res.Passed = false
	}
}

func (r *Result) testEvent(ev event) {
	top, _, isSub := strings.Cut(ev.Test, "/")
	t := r.byName[top]
	if t == nil {
		t = &Test{Name: top, Status: NotRun}
		r.byName[top] = t
		r.Tests = append(r.Tests, t)
	}
	switch {
	case isSub && ev.Action == "output":
		t.subOutput(ev.Test, strings.TrimRight(ev.Output, "\n"))
	case isSub:
		t.subEvent(ev.Test, ev.Action)
	case ev.Action == "run":
		t.begin()
	case ev.Action == "output":
		line := strings.TrimRight(ev.Output, "\n")
		if topVerdict(line, top) {
			t.verdict = true
		} else if !framing(line) {
			t.current.add(line)
		}
	case ev.Action == "pass" || ev.Action == "fail" || ev.Action == "skip":
		t.end(ev)
	}
}

// begin starts a repeat of the test.
func (t *Test) begin() {
	t.current = lineBuf{}
	t.subStart = nil
	t.finished = false
	t.started = true
	t.verdict = false
}

// subOutput keeps a line a subtest printed.
func (t *Test) subOutput(name, line string) {
	switch trimmed := strings.TrimSpace(line); {
	case strings.HasPrefix(trimmed, "=== RUN"):
		if t.subStart == nil {
			t.subStart = map[string]int{}
		}
		t.subStart[name] = t.current.len()
	case strings.HasPrefix(trimmed, "--- FAIL"):
		// go test prints a subtest's verdict after its messages; put
		// it first so the messages read as belonging to it.
		at, ok := t.subStart[name]
		if !ok {
			at = t.current.len()
		}
		t.current.insert(at, trimmed)
	case !framing(line):
		t.current.add(line)
	}
}

// end ends a repeat of the test with ev's verdict.
func (t *Test) end(ev event) {
	if ev.Action == "pass" && !t.verdict {
		// test2json ends a test that was running when the binary
		// exited as passed; without the testing package's own
		// "--- PASS" line it did not pass. finish decides what it was.
		return
	}
	t.finished = true
	t.started = false
	t.Runs++
	t.Elapsed = time.Duration(ev.Elapsed * float64(time.Second))
	t.Output = t.current.lines()
	t.Repeats = append(t.Repeats, statusOf(ev.Action))
	switch ev.Action {
	case "fail":
		t.Fails++
		if t.Failure == nil {
			t.Failure = t.Output
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

func statusOf(action string) Status {
	switch action {
	case "pass":
		return Pass
	case "fail":
		return Fail
	case "skip":
		return Skip
	}
	return NotRun
}

// topVerdict reports whether line is the testing package's verdict line
// for the top-level test name.
func topVerdict(line, name string) bool {
	for _, p := range []string{"--- PASS: ", "--- FAIL: ", "--- SKIP: "} {
		if rest, ok := strings.CutPrefix(line, p); ok {
			return rest == name || strings.HasPrefix(rest, name+" ")
		}
	}
	return false
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

// runEnd says how the go command ended, for finish.
type runEnd struct {
	timeout time.Duration // the test binary's -timeout
	// onClock is the wall time the test binary ran when the grader
	// stopped it (killed), which the run clock can make longer than
	// timeout on a busy machine.
	onClock time.Duration
	// killed is set when the grader killed the test binary itself: it
	// was still running well after its own timeout (a hang in init or
	// in the harness, before the testing package's alarm was set).
	killed bool
	// exit describes an abnormal end of the go command ("signal:
	// killed"), "" for a normal exit with any status.
	exit string
	// source reads one of the package's test files by its base name
	// (nil or nil result: unknown), to tell t.Log lines from failures.
	source func(name string) []byte
	// paths puts back the names of overlaid files: the compiler and the
	// runtime name the file that replaced one (a temporary copy of the
	// learner's stub), and the learner knows it as labs/NN_x/file.go.
	paths *strings.Replacer
}

// finish settles what the events alone leave open: unfinished tests,
// timeouts, compile errors, early exits and the summary message.
func (r *Result) finish(end runEnd) {
	r.settle()
	if end.paths != nil {
		r.rewrite(end.paths)
	}
	r.parseBuildErrors()
	if r.buildFailed() {
		return
	}
	timedOut := end.killed || r.anyLine("panic: test timed out after")
	crash := firstWith(r.allLines(), "panic:", "fatal error:")
	initStuck := firstWith(r.allLines(), initGuard+initStuckSays)
	unfinished := r.endUnfinished(timedOut || crash != "")
	logs := &logIndex{read: end.source}
	for _, t := range r.Tests {
		if t.Status == Fail {
			r.Passed = false
		}
		t.Failure = tidyFailure(t.Name, t.Failure)
		t.summarize(logs.isLog)
	}
	if !r.Completed {
		r.Passed = false
	}
	switch {
	case timedOut:
		r.TimedOut = true
		r.Passed = false
		r.Message = r.timeoutMessage(end, unfinished)
	case initStuck != "":
		// The harness stopped a binary stuck initializing; lines the
		// lab's init printed meanwhile ("=== RUN ...") only look like
		// steps that started.
		r.Message = strings.TrimPrefix(initStuck, initGuard)
	case len(unfinished) > 0 && crash != "":
		r.Message = r.crashMessage(unfinished, crash)
	case len(unfinished) > 0:
		r.Message = fmt.Sprintf("the test binary %s during %s before it finished: did your code call os.Exit or syscall.Exit? The steps from there on did not run.", end.how(), stepNames(unfinished))
	case len(r.Tests) == 0 && !r.Completed:
		r.Message = "the test binary failed before running any test: " + firstNonEmpty(append(r.Output, r.Stderr...))
	case !r.Completed:
		r.Message = fmt.Sprintf("the test binary %s before it finished (it never reported the end of the run), so no step after %s counts", end.how(), r.Tests[len(r.Tests)-1].Name)
	}
}

// initGuard begins what the harness prints when it stops a test binary
// whose packages never finished initializing (labs/internal/labtest), and
// initStuckSays is how that line goes on.
const (
	initGuard     = "labtest: "
	initStuckSays = "the lab's package did not finish initializing"
)

// how says how the test binary ended: "exited" or "was stopped (...)".
func (end runEnd) how() string {
	if end.exit != "" {
		return "was stopped (" + end.exit + ")"
	}
	return "exited"
}

// rewrite replaces paths in every line the run kept.
func (r *Result) rewrite(paths *strings.Replacer) {
	for _, lines := range [][]string{r.BuildOutput, r.Output, r.Stderr} {
		for i, l := range lines {
			lines[i] = paths.Replace(l)
		}
	}
	for _, t := range r.Tests {
		for _, lines := range [][]string{t.Failure, t.Output} {
			for i, l := range lines {
				lines[i] = paths.Replace(l)
			}
		}
	}
}

// parseBuildErrors finds the compiler's positioned lines.
func (r *Result) parseBuildErrors() {
	for _, line := range r.BuildOutput {
		if m := compileLine.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			ln, _ := strconv.Atoi(m[2])
			col, _ := strconv.Atoi(m[3])
			r.BuildErrors = append(r.BuildErrors, CompileError{File: m[1], Line: ln, Col: col, Msg: m[4]})
		}
	}
}

// buildFailed settles a run that did not compile and reports whether it
// was one. A go command that failed before building (no such package, bad
// overlay) prints to the package output or stderr instead.
func (r *Result) buildFailed() bool {
	if !r.BuildFailed && (r.Started || len(r.Tests) > 0 || len(r.BuildErrors) > 0 || !r.anyLine("setup failed", "no Go files", "cannot find", "build failed")) {
		return false
	}
	r.BuildFailed = true
	r.Passed = false
	if len(r.BuildErrors) > 0 {
		r.Message = fmt.Sprintf("does not compile: %s", r.BuildErrors[0])
	} else {
		r.Message = "does not compile: " + firstNonEmpty(append(append(append([]string{}, r.BuildOutput...), r.Output...), r.Stderr...))
	}
	return true
}

// endUnfinished settles the tests that were running when the binary
// ended: failed when it crashed or timed out, not run when it simply
// went away. It returns them.
func (r *Result) endUnfinished(broke bool) []*Test {
	var unfinished []*Test
	for _, t := range r.Tests {
		if !t.started {
			continue
		}
		unfinished = append(unfinished, t)
		lines := t.current.lines()
		if !broke {
			// The binary went away without a word: an exit from the
			// learner's code, or a signal. The step did not run to its
			// end, so it neither passed nor failed.
			t.Status = NotRun
			t.Failure = append(lines, "(the test binary exited during this step, before it finished)")
			continue
		}
		t.Status = Fail
		t.Fails++
		t.Repeats = append(t.Repeats, Fail)
		t.Failure = append(lines, "(this step did not finish)")
		if why, ok := mapRace(lines); ok {
			t.Failure = append([]string{why}, t.Failure...)
		}
	}
	return unfinished
}

// timeoutMessage says what was running when the run timed out.
func (r *Result) timeoutMessage(end runEnd, unfinished []*Test) string {
	who := ""
	if running := r.runningAtTimeout(); len(running) > 0 {
		var ts []*Test
		for _, n := range running {
			ts = append(ts, &Test{Name: n})
		}
		who = stepNames(ts)
	} else if len(unfinished) > 0 {
		who = stepNames(unfinished)
	}
	after := fmt.Sprintf("timed out after %v", end.timeout)
	if busy := end.onClock - end.timeout; end.killed && busy > time.Second {
		after = fmt.Sprintf("timed out after %v of running (%v on the clock: the machine was busy, and the time spent waiting for its CPUs does not count)", end.timeout, end.onClock.Round(time.Second))
	}
	switch {
	case who != "":
		return fmt.Sprintf("%s: %s did not finish (an endless loop, or waiting for something that never happens?)", after, who)
	case len(r.Tests) == 0:
		return fmt.Sprintf("%s before step 1 started: the package's initialization (an init function or a package-level variable) or the grader's setup never finished", after)
	default:
		return fmt.Sprintf("%s after the last step ended: something the tests started never stopped", after)
	}
}

// crashMessage says which steps a panic or fatal error stopped, and why
// when it is a stall or a race on a map.
func (r *Result) crashMessage(unfinished []*Test, crash string) string {
	if why, ok := stallWhy(crash); ok {
		return fmt.Sprintf("%s is stuck: %s", stepNames(unfinished), why)
	}
	if why, ok := mapRace(r.allLines()); ok {
		return fmt.Sprintf("%s crashed: %s", stepNames(unfinished), why)
	}
	return fmt.Sprintf("the test binary crashed during %s: %s", stepNames(unfinished), crash)
}

func stepNames(ts []*Test) string {
	var out []string
	for _, t := range ts {
		out = append(out, StepName(t.Name))
	}
	return strings.Join(out, ", ")
}

// stepNumber matches a grader test name and captures the step's number.
var stepNumber = regexp.MustCompile(`^TestStep(\d+)_`)

// StepName is how messages name a step's test: "step 3 (TestStep3_X)",
// or the test name itself for a test that is not a step.
func StepName(test string) string {
	if m := stepNumber.FindStringSubmatch(test); m != nil {
		return fmt.Sprintf("step %s (%s)", m[1], test)
	}
	return test
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
		all = append(all, t.current.lines()...)
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
	return sanitize.Lines(strings.Split(s, "\n"))
}
