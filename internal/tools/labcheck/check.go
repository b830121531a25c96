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
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && stepTest.MatchString(fn.Name.Name) {
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
	Elapsed       time.Duration
	Problems      []string
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

// checkLab runs (a) to (d) for one lab.
func checkLab(ctx context.Context, cfg config, id string) (r report) {
	start := time.Now()
	r = report{ID: id, HintsOK: true}
	defer func() { r.Elapsed = time.Since(start) }()
	fail := func(format string, args ...any) { r.Problems = append(r.Problems, fmt.Sprintf(format, args...)) }
	logf := cfg.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}

	dir := cfg.labsDir(id)
	manifestPath := filepath.Join(dir, "lab.yaml")
	data, err := os.ReadFile(manifestPath)
	if err != nil {
		r.HintsOK = false
		fail("no manifest: %v", err)
		return r
	}
	tests, err := stepTests(dir)
	if err != nil {
		fail("%v", err)
	}
	r.Steps = len(tests)
	known := map[string]bool{}
	for _, t := range tests {
		known[t] = true
	}
	lab, probs := lessons.ParseLab(filepath.Join("labs", id, "lab.yaml"), id, data, known)
	for _, p := range probs {
		r.HintsOK = false
		fail("%s", p)
	}
	if ps := manifestProblems(lab, tests); len(ps) > 0 {
		r.HintsOK = false
		r.Problems = append(r.Problems, ps...)
	}
	if lab.File == "" {
		return r
	}
	stub := filepath.Join("labs", id, lab.File)
	solution := filepath.Join("solutions", id, lab.File)
	if _, err := os.Stat(filepath.Join(dir, lab.File)); err != nil {
		fail("stub file: %v", err)
		return r
	}
	if _, err := os.Stat(filepath.Join(cfg.Root, solution)); err != nil {
		fail("solution file: %v", err)
		return r
	}
	if src, err := os.ReadFile(filepath.Join(dir, lab.File)); err == nil {
		r.Problems = append(r.Problems, stubTextProblems(string(src))...)
	}
	base := cfg.options(id)

	// (a) the untouched stub: every step test fails. Without git, a stub
	// the learner changed cannot be restored (loadPristine said so).
	var ps []string
	if cfg.Pristine != nil && cfg.Pristine.Unchecked[filepath.ToSlash(stub)] {
		r.StubSkipped = true
	} else {
		logf("%s: stub", id)
		res, err := grade.Run(ctx, base)
		if err != nil {
			fail("run the stub: %v", err)
			return r
		}
		r.StubFailing, ps = stubProblems(res, tests)
		r.Problems = append(r.Problems, ps...)
	}

	// (b) the solution, under -race, repeatedly.
	logf("%s: solution (race=%v, count=%d)", id, cfg.Race, cfg.Count)
	o := base
	o.Overlay = cfg.overlay(map[string]string{stub: solution})
	o.Race, o.Count = cfg.Race, cfg.Count
	o.Timeout = cfg.Timeout * time.Duration(cfg.Count) // the timeout covers every repeat
	res, err := grade.Run(ctx, o)
	if err != nil {
		fail("run the solution: %v", err)
		return r
	}
	r.SolutionPass, ps = solutionProblems(res, tests, cfg.Count)
	r.Problems = append(r.Problems, ps...)

	// (d) every planted wrong solution (mutants and learner bugs, stored
	// as patches of the solution) fails at least one step test.
	solSrc, err := os.ReadFile(filepath.Join(cfg.Root, solution))
	if err != nil {
		fail("read the solution: %v", err)
		return r
	}
	tmp, err := os.MkdirTemp("", "labcheck-"+id+"-")
	if err != nil {
		fail("temporary folder: %v", err)
		return r
	}
	defer os.RemoveAll(tmp)
	var wrong []wrongSolution
	for _, kind := range []struct{ dir, name string }{{"mutants", "mutant"}, {"bugs", "bug"}} {
		ws, ps := loadPatches(cfg.Root, id, kind.dir, kind.name, string(solSrc), tmp)
		wrong = append(wrong, ws...)
		r.Problems = append(r.Problems, ps...)
		n := len(ws) + len(ps)
		if kind.dir == "mutants" {
			r.Mutants = n
		} else {
			r.Bugs = n
		}
	}
	for _, w := range wrong {
		logf("%s: %s %s", id, w.Kind, w.Name)
		if p, err := runMutant(ctx, cfg, base, stub, w, tests); err != nil {
			fail("run %s %s: %v", w.Kind, w.Name, err)
		} else if p != "" {
			fail("%s", p)
		} else if w.Kind == "mutant" {
			r.MutantsCaught++
		} else {
			r.BugsCaught++
		}
	}

	// (e) every correct variant passes every step test under -race,
	// -count times.
	variants, _ := filepath.Glob(filepath.Join(cfg.Root, "solutions", id, "testdata", "variants", "*.go"))
	sort.Strings(variants)
	r.Variants = len(variants)
	for _, v := range variants {
		name := filepath.Base(v)
		logf("%s: variant %s (race=%v, count=%d)", id, name, cfg.Race, cfg.Count)
		o := base
		o.Overlay = cfg.overlay(map[string]string{stub: v})
		o.Race, o.Count = cfg.Race, cfg.Count
		o.Timeout = cfg.Timeout * time.Duration(cfg.Count) // the timeout covers every repeat
		res, err := grade.Run(ctx, o)
		if err != nil {
			fail("run variant %s: %v", name, err)
			continue
		}
		_, ps := solutionProblems(res, tests, cfg.Count)
		if len(ps) == 0 {
			r.VariantsPass++
		}
		for _, p := range ps {
			fail("variant %s: %s", name, p)
		}
	}
	return r
}
