package main

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/lessons"
)

// labDir matches lab folders: two digits, an underscore, a slug.
var labDir = regexp.MustCompile(`^\d\d_[a-z0-9_]+$`)

// stepTest matches grader test names.
var stepTest = regexp.MustCompile(`^TestStep\d+_\w+$`)

// discover lists the lab ids under root/labs, sorted.
func discover(root string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(root, "labs"))
	if err != nil {
		return nil, fmt.Errorf("list labs: %w", err)
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() && labDir.MatchString(e.Name()) {
			ids = append(ids, e.Name())
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// stepTests returns the TestStep* functions declared in dir/*_test.go, in
// file order.
func stepTests(dir string) ([]string, error) {
	all, err := testFuncs(dir)
	var names []string
	for _, n := range all {
		if stepTest.MatchString(n) {
			names = append(names, n)
		}
	}
	return names, err
}

// testFuncs returns every Test* function declared in dir/*_test.go, in
// file order.
func testFuncs(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var names []string
	fset := token.NewFileSet()
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", f, err)
		}
		for _, d := range af.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") {
				names = append(names, fn.Name.Name)
			}
		}
	}
	return names, nil
}

// manifestProblems checks (c): every step test has a manifest step with at
// least one hint, and every manifest step names a step test.
func manifestProblems(lab *lessons.Lab, tests []string) []string {
	var probs []string
	inManifest := map[string]bool{}
	for _, st := range lab.Steps {
		inManifest[st.Test] = true
		if len(st.Hints) == 0 {
			probs = append(probs, fmt.Sprintf("step %s has no hint", st.Test))
		}
	}
	inTests := map[string]bool{}
	for _, name := range tests {
		inTests[name] = true
		if !inManifest[name] {
			probs = append(probs, fmt.Sprintf("test %s has no step in lab.yaml", name))
		}
	}
	for _, st := range lab.Steps {
		if st.Test != "" && !inTests[st.Test] {
			probs = append(probs, fmt.Sprintf("lab.yaml step %s: no such TestStep function", st.Test))
		}
	}
	if len(tests) == 0 {
		probs = append(probs, "no TestStep* tests")
	}
	return probs
}

// stubTextProblems checks the lab contract on the stub's text: the bodies
// to write return (or panic with) labs.ErrNotImplemented and say what to
// do in TODO comments.
func stubTextProblems(src string) []string {
	var probs []string
	if !strings.Contains(src, "labs.ErrNotImplemented") {
		probs = append(probs, "the stub never uses labs.ErrNotImplemented")
	}
	if !strings.Contains(src, "TODO") {
		probs = append(probs, "the stub has no TODO comment saying what to write")
	}
	return probs
}

// stubProblems checks (a): on the untouched stub every step test fails.
func stubProblems(res *grade.Result, tests []string) (failing int, probs []string) {
	if res.BuildFailed {
		return 0, []string{"the stub does not compile: " + res.Message}
	}
	for _, s := range res.Steps(tests) {
		switch s.Status {
		case grade.Fail:
			failing++
		case grade.Pass:
			probs = append(probs, fmt.Sprintf("%s passes on the untouched stub", s.Test))
		default:
			probs = append(probs, fmt.Sprintf("%s is %s on the stub; it must run and fail", s.Test, s.Status))
		}
	}
	if res.TimedOut {
		probs = append(probs, "the stub run timed out: "+res.Message)
	}
	return failing, probs
}

// solutionProblems checks (b): with the solution every step test passes on
// every repeat.
func solutionProblems(res *grade.Result, tests []string, count int) (passing int, probs []string) {
	if res.BuildFailed {
		return 0, []string{"the solution does not compile: " + res.Message}
	}
	for _, s := range res.Steps(tests) {
		t := res.Test(s.Test)
		switch {
		case s.Status == grade.Pass && t.Runs == count:
			passing++
		case s.Status == grade.Fail:
			probs = append(probs, fmt.Sprintf("%s fails with the solution (%d of %d runs): %s", s.Test, t.Fails, t.Runs, strings.Join(firstLines(s.Failure, 3), " / ")))
		case s.Status == grade.Pass:
			probs = append(probs, fmt.Sprintf("%s ran %d times with the solution, want %d", s.Test, t.Runs, count))
		default:
			probs = append(probs, fmt.Sprintf("%s is %s with the solution", s.Test, s.Status))
		}
	}
	if res.TimedOut {
		probs = append(probs, "the solution run timed out: "+res.Message)
	}
	if !res.Passed && len(probs) == 0 {
		probs = append(probs, "the solution run failed outside the step tests: "+res.Message)
	}
	return passing, probs
}

// runMutant grades one mutant and returns "" when a step test caught it.
// It runs without the race detector first, because that build is several
// times faster; only a mutant that survives is run again under -race
// (data-race bugs are caught only there).
func runMutant(ctx context.Context, cfg config, base grade.Options, stub string, w wrongSolution, tests []string) (string, error) {
	o := base
	o.Overlay = cfg.overlay(map[string]string{stub: w.Path})
	o.FailFast = true // one failing step is enough
	res, err := grade.Run(ctx, o)
	if err != nil {
		return "", err
	}
	p := mutantProblem(w.Kind+" "+w.Name, res, tests)
	if p == "" || res.BuildFailed || !cfg.Race {
		return p, nil
	}
	o.Race = true
	if res, err = grade.Run(ctx, o); err != nil {
		return "", err
	}
	return mutantProblem(w.Kind+" "+w.Name, res, tests), nil
}

// mutantProblem checks (d) for one wrong solution (what names it, e.g.
// "mutant x.patch"): at least one step test fails.
func mutantProblem(what string, res *grade.Result, tests []string) string {
	if res.BuildFailed {
		return fmt.Sprintf("%s does not compile: %s", what, res.Message)
	}
	for _, s := range res.Steps(tests) {
		if s.Status == grade.Fail {
			return ""
		}
	}
	return fmt.Sprintf("%s passes every test: the graders do not catch its bug", what)
}

func firstLines(lines []string, n int) []string {
	var out []string
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
		if len(out) == n {
			break
		}
	}
	return out
}

// report is one lab's row.
type report struct {
	ID            string
	Steps         int
	StubFailing   int
	StubSkipped   bool // the stub could not be restored (see pristine.Unchecked)
	SolutionPass  int
	Mutants       int
	MutantsCaught int
	Bugs          int
	BugsCaught    int
	Variants      int
	VariantsPass  int
	HintsOK       bool
	// Promises is how many the lab's contract lists, -1 without one.
	Promises int
	Elapsed  time.Duration
	Problems []string
}

type config struct {
	Root  string
	Count int
	Race  bool
	// Timeout per go test run.
	Timeout time.Duration
	// Log, when set, receives progress lines.
	Log func(format string, args ...any)
	// Env goes to every go test (the etcd labcheck runs for the graders);
	// BinDir is where test binaries are kept (see grade.Options).
	Env    []string
	BinDir string
	// Pristine, when set, is labs/ as committed: labcheck reads the
	// manifests and tests there and overlays it on every run.
	Pristine *pristine
}

// labsDir is the folder labs/<id> is read from: the committed copy.
func (cfg config) labsDir(id string) string {
	if cfg.Pristine != nil {
		return filepath.Join(cfg.Pristine.Dir, "labs", id)
	}
	return filepath.Join(cfg.Root, "labs", id)
}

// overlay is the pristine overlay plus extra.
func (cfg config) overlay(extra map[string]string) map[string]string {
	return cfg.Pristine.with(extra)
}

// options are the grade options of one lab under cfg.
func (cfg config) options(id string) grade.Options {
	return grade.Options{Dir: cfg.Root, Lab: id, Timeout: cfg.Timeout, Env: cfg.Env, BinDir: cfg.BinDir, Overlay: cfg.overlay(nil)}
}

// BugRuns is how many times every learner bug is graded: each run must
// fail a step, so a bug caught now and then counts as not caught.
const BugRuns = 5

// labCheck is one lab's check in progress.
type labCheck struct {
	cfg   config
	id    string
	r     *report
	logf  func(format string, args ...any)
	dir   string   // the lab folder as shipped
	tests []string // its TestStep* functions
	lab   *lessons.Lab
	// stub and solution are the lab's file and its solution, relative to
	// the module root.
	stub, solution string
	contract       *contract
	base           grade.Options
}

func (c *labCheck) fail(format string, args ...any) {
	c.r.Problems = append(c.r.Problems, fmt.Sprintf(format, args...))
}

// checkLab runs (a) to (e) and the contract check for one lab.
func checkLab(ctx context.Context, cfg config, id string) report {
	start := time.Now()
	r := report{ID: id, HintsOK: true, Promises: -1}
	c := &labCheck{cfg: cfg, id: id, r: &r, logf: cfg.Log, dir: cfg.labsDir(id), base: cfg.options(id)}
	if c.logf == nil {
		c.logf = func(string, ...any) {}
	}
	if c.readManifest() && c.readContract() && c.findFiles() && c.checkStub(ctx) && c.checkSolution(ctx) {
		c.checkWrongSolutions(ctx)
		c.checkVariants(ctx)
	}
	r.Elapsed = time.Since(start)
	return r
}

// readManifest reads lab.yaml and the step tests and checks (c).
func (c *labCheck) readManifest() bool {
	data, err := os.ReadFile(filepath.Join(c.dir, "lab.yaml"))
	if err != nil {
		c.r.HintsOK = false
		c.fail("no manifest: %v", err)
		return false
	}
	if c.tests, err = stepTests(c.dir); err != nil {
		c.fail("%v", err)
	}
	c.r.Steps = len(c.tests)
	known := map[string]bool{}
	for _, t := range c.tests {
		known[t] = true
	}
	lab, probs := lessons.ParseLab(filepath.Join("labs", c.id, "lab.yaml"), c.id, data, known)
	for _, p := range probs {
		c.r.HintsOK = false
		c.fail("%s", p)
	}
	if ps := manifestProblems(lab, c.tests); len(ps) > 0 {
		c.r.HintsOK = false
		c.r.Problems = append(c.r.Problems, ps...)
	}
	c.lab = lab
	return lab.File != ""
}

// readContract reads contract.yaml and checks it against the test
// functions; the solution run checks the rest (contractRunProblems).
func (c *labCheck) readContract() bool {
	ct, probs := loadContract(c.dir)
	c.r.Problems = append(c.r.Problems, probs...)
	if ct == nil {
		if len(probs) == 0 {
			c.fail("no %s: list every promise the README and the stub make, each with the tests that check it", ContractFile)
		}
		return true
	}
	c.contract = ct
	c.r.Promises = len(ct.Promises)
	funcs := map[string]bool{}
	names, err := testFuncs(c.dir)
	if err != nil {
		c.fail("%v", err)
	}
	for _, n := range names {
		funcs[n] = true
	}
	c.r.Problems = append(c.r.Problems, contractProblems(ct, c.dir, c.tests, funcs)...)
	return true
}

// findFiles locates the stub and the solution and checks the stub's text.
func (c *labCheck) findFiles() bool {
	c.stub = filepath.Join("labs", c.id, c.lab.File)
	c.solution = filepath.Join("solutions", c.id, c.lab.File)
	src, err := os.ReadFile(filepath.Join(c.dir, c.lab.File))
	if err != nil {
		c.fail("stub file: %v", err)
		return false
	}
	if _, err := os.Stat(filepath.Join(c.cfg.Root, c.solution)); err != nil {
		c.fail("solution file: %v", err)
		return false
	}
	c.r.Problems = append(c.r.Problems, stubTextProblems(string(src))...)
	return true
}

// checkStub checks (a): on the untouched stub every step test fails.
// Without git, a stub the learner changed cannot be restored
// (loadPristine said so) and the check is skipped.
func (c *labCheck) checkStub(ctx context.Context) bool {
	if c.cfg.Pristine != nil && c.cfg.Pristine.Unchecked[filepath.ToSlash(c.stub)] {
		c.r.StubSkipped = true
		return true
	}
	c.logf("%s: stub", c.id)
	res, err := grade.Run(ctx, c.base)
	if err != nil {
		c.fail("run the stub: %v", err)
		return false
	}
	var ps []string
	c.r.StubFailing, ps = stubProblems(res, c.tests)
	c.r.Problems = append(c.r.Problems, ps...)
	return true
}

// repeated are the options of a run of file in place of the stub, under
// -race when configured and -count times; the timeout covers every
// repeat.
func (c *labCheck) repeated(file string) grade.Options {
	o := c.base
	o.Overlay = c.cfg.overlay(map[string]string{c.stub: file})
	o.Race, o.Count = c.cfg.Race, c.cfg.Count
	o.Timeout = c.cfg.Timeout * time.Duration(c.cfg.Count)
	return o
}

// checkSolution checks (b), and that every test the contract lists ran.
func (c *labCheck) checkSolution(ctx context.Context) bool {
	c.logf("%s: solution (race=%v, count=%d)", c.id, c.cfg.Race, c.cfg.Count)
	res, err := grade.Run(ctx, c.repeated(c.solution))
	if err != nil {
		c.fail("run the solution: %v", err)
		return false
	}
	var ps []string
	c.r.SolutionPass, ps = solutionProblems(res, c.tests, c.cfg.Count)
	c.r.Problems = append(c.r.Problems, ps...)
	if c.contract != nil {
		c.r.Problems = append(c.r.Problems, contractRunProblems(c.contract, res)...)
	}
	return true
}

// checkWrongSolutions checks (d): every mutant fails a step test, and
// every learner bug fails one in each of BugRuns runs.
func (c *labCheck) checkWrongSolutions(ctx context.Context) {
	solSrc, err := os.ReadFile(filepath.Join(c.cfg.Root, c.solution))
	if err != nil {
		c.fail("read the solution: %v", err)
		return
	}
	tmp, err := os.MkdirTemp("", "labcheck-"+c.id+"-")
	if err != nil {
		c.fail("temporary folder: %v", err)
		return
	}
	defer os.RemoveAll(tmp)
	mutants, ps := loadPatches(c.cfg.Root, c.id, "mutants", "mutant", string(solSrc), tmp)
	c.r.Problems = append(c.r.Problems, ps...)
	c.r.Mutants = len(mutants) + len(ps)
	bugs, ps := loadPatches(c.cfg.Root, c.id, "bugs", "bug", string(solSrc), tmp)
	c.r.Problems = append(c.r.Problems, ps...)
	c.r.Bugs = len(bugs) + len(ps)
	for _, w := range mutants {
		c.logf("%s: mutant %s", c.id, w.Name)
		if c.judge(w, func() (string, error) { return runMutant(ctx, c.cfg, c.base, c.stub, w, c.tests) }) {
			c.r.MutantsCaught++
		}
	}
	for _, w := range bugs {
		c.logf("%s: bug %s (x%d)", c.id, w.Name, BugRuns)
		if c.judge(w, func() (string, error) { return runBug(ctx, c.cfg, c.base, c.stub, w, c.tests) }) {
			c.r.BugsCaught++
		}
	}
}

// judge runs one wrong solution's check and records its problem; it
// reports whether the wrong solution was caught.
func (c *labCheck) judge(w wrongSolution, run func() (string, error)) bool {
	p, err := run()
	switch {
	case err != nil:
		c.fail("run %s %s: %v", w.Kind, w.Name, err)
	case p != "":
		c.fail("%s", p)
	default:
		return true
	}
	return false
}

// checkVariants checks (e): every correct variant passes every step test
// under -race, -count times.
func (c *labCheck) checkVariants(ctx context.Context) {
	variants, _ := filepath.Glob(filepath.Join(c.cfg.Root, "solutions", c.id, "testdata", "variants", "*.go"))
	sort.Strings(variants)
	c.r.Variants = len(variants)
	for _, v := range variants {
		name := filepath.Base(v)
		c.logf("%s: variant %s (race=%v, count=%d)", c.id, name, c.cfg.Race, c.cfg.Count)
		res, err := grade.Run(ctx, c.repeated(v))
		if err != nil {
			c.fail("run variant %s: %v", name, err)
			continue
		}
		_, ps := solutionProblems(res, c.tests, c.cfg.Count)
		if len(ps) == 0 {
			c.r.VariantsPass++
		}
		for _, p := range ps {
			c.fail("variant %s: %s", name, p)
		}
	}
}

// runBug grades one learner bug BugRuns times and returns "" when a step
// test failed in every run. As with mutants the fast build goes first; a
// bug that some run let through is graded again under -race (data races
// are caught only there), where every run must fail.
func runBug(ctx context.Context, cfg config, base grade.Options, stub string, w wrongSolution, tests []string) (string, error) {
	o := base
	o.Overlay = cfg.overlay(map[string]string{stub: w.Path})
	missed, msg, err := bugMissed(ctx, cfg, o, tests)
	if err != nil || msg != "" {
		return fmt.Sprintf("bug %s %s", w.Name, msg), err
	}
	if missed == 0 {
		return "", nil
	}
	how := ""
	if cfg.Race {
		o.Race = true
		// The race detector reports a race once per process: without
		// this, a racy bug fails the first of the repeats only.
		o.Env = append(slices.Clone(o.Env), raceEveryTime)
		if missed, _, err = bugMissed(ctx, cfg, o, tests); err != nil || missed == 0 {
			return "", err
		}
		how = " under -race"
	}
	if missed == BugRuns {
		return fmt.Sprintf("bug %s passes every test%s: the graders do not catch its bug", w.Name, how), nil
	}
	return fmt.Sprintf("bug %s passes every test in %d of %d runs%s: the graders catch it only sometimes", w.Name, missed, BugRuns, how), nil
}

// bugMissed counts the runs of BugRuns in which no step test failed, as
// cheaply as it can: one run of the steps in order, stopping at the first
// that fails, then that step alone in BugRuns-1 more runs (one go test
// -count run), so that each of the BugRuns runs failed a step; and only if
// the first run or one of the others let the bug through, every step
// BugRuns times, which decides. msg is set when the bug does not compile.
func bugMissed(ctx context.Context, cfg config, o grade.Options, tests []string) (missed int, msg string, err error) {
	timeout := cfg.Timeout
	first := o
	first.FailFast = true
	res, err := grade.Run(ctx, first)
	if err != nil {
		return 0, "", err
	}
	cfg.logRun(o, "first run", res, tests)
	if res.BuildFailed {
		return 0, "does not compile: " + res.Message, nil
	}
	catcher := ""
	for _, s := range res.Steps(tests) {
		if s.Status == grade.Fail {
			catcher = s.Test
			break
		}
	}
	if catcher != "" {
		more := BugRuns - 1
		one := o
		one.Run = "^" + catcher + "$"
		one.Count, one.Timeout = more, timeout*time.Duration(more)
		if res, err = grade.Run(ctx, one); err != nil {
			return 0, "", err
		}
		cfg.logRun(o, fmt.Sprintf("%s alone x%d", catcher, more), res, tests)
		if missedRuns(res, []string{catcher}, more) == 0 {
			return 0, "", nil
		}
	}
	o.Count = BugRuns
	o.Timeout = timeout * BugRuns
	if res, err = grade.Run(ctx, o); err != nil {
		return 0, "", err
	}
	cfg.logRun(o, fmt.Sprintf("every step x%d", BugRuns), res, tests)
	return missedRuns(res, tests, BugRuns), "", nil
}

// logRun logs one run of a wrong solution (o's lab, since -p interleaves
// the labs' lines): its time and the steps that failed.
func (cfg config) logRun(o grade.Options, what string, res *grade.Result, tests []string) {
	if cfg.Log == nil {
		return
	}
	var failed []string
	for _, s := range res.Steps(tests) {
		if s.Status == grade.Fail {
			failed = append(failed, s.Test)
		}
	}
	cfg.Log("%s:   %s (race=%v): %.1fs, failed %v", o.Lab, what, o.Race, res.Elapsed.Seconds(), failed)
}

// raceEveryTime makes the race detector report a race again each time it
// happens, not only the first time in a process (ThreadSanitizer's
// suppress_equal_* options, which GORACE passes on).
const raceEveryTime = "GORACE=suppress_equal_stacks=0 suppress_equal_addresses=0"

// missedRuns counts the repeats of a -count=n run in which no step test
// failed. go test runs every test once per repeat, so repeat k of each
// test belongs to run k. Repeats the binary never reached because a step
// crashed it count as caught.
func missedRuns(res *grade.Result, tests []string, n int) int {
	crashed := false
	for _, s := range res.Steps(tests) {
		if s.Status == grade.Fail && !res.Completed {
			crashed = true
		}
	}
	missed := 0
	for k := range n {
		caught, reached := false, false
		for _, name := range tests {
			t := res.Test(name)
			if t == nil || k >= len(t.Repeats) {
				continue
			}
			reached = true
			if t.Repeats[k] == grade.Fail {
				caught = true
			}
		}
		if !caught && (reached || !crashed) {
			missed++
		}
	}
	return missed
}
