package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func fixtureConfig(t *testing.T) config {
	t.Helper()
	root, err := filepath.Abs("testdata/mod")
	if err != nil {
		t.Fatal(err)
	}
	return config{Root: root, Count: 2}
}

func TestCheckLabOnAGoodLab(t *testing.T) {
	r := checkLab(context.Background(), fixtureConfig(t), "01_demo")
	if r.Steps != 2 || r.StubFailing != 2 || r.SolutionPass != 2 || !r.HintsOK {
		t.Errorf("report = %+v, want 2 steps failing on the stub and passing with the solution", r)
	}
	if r.Mutants != 2 || r.MutantsCaught != 1 {
		t.Errorf("mutants caught %d/%d, want 1/2", r.MutantsCaught, r.Mutants)
	}
	if r.Bugs != 3 || r.BugsCaught != 1 {
		t.Errorf("bugs caught %d/%d, want 1/3 (one is stale, one caught in some runs only)", r.BugsCaught, r.Bugs)
	}
	if r.Promises != 2 {
		t.Errorf("promises = %d, want the contract's 2", r.Promises)
	}
	if r.Variants != 2 || r.VariantsPass != 1 {
		t.Errorf("variants passing %d/%d, want 1/2", r.VariantsPass, r.Variants)
	}
	got := strings.Join(r.Problems, "\n")
	for _, want := range []string{
		"mutant survivor.patch passes every test",
		"stale patch stale.patch: hunk 1 matches 0 times",
		"variant wrong.go: TestStep2_Negative fails with the solution",
		"bug sometimes.patch passes every test in 2 of 5 runs: the graders catch it only sometimes",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
	if len(r.Problems) != 4 {
		t.Errorf("problems = %q, want exactly the four above", r.Problems)
	}
}

func TestCheckLabOnALeakyLab(t *testing.T) {
	r := checkLab(context.Background(), fixtureConfig(t), "02_leaky")
	got := strings.Join(r.Problems, "\n")
	for _, want := range []string{
		"TestStep1_Adds passes on the untouched stub",
		"test TestStep2_Unlisted has no step in lab.yaml",
		"TestStep2_Unlisted fails with the solution",
		"needs at least one hint",
		"contract.yaml: promise 2 (Bad_ID): id must be kebab-case",
		"contract.yaml: promise 2 (Bad_ID): says nothing",
		"contract.yaml: promise 2 (Bad_ID): from NOWHERE.md: no such file",
		"contract.yaml: promise 2 (Bad_ID): lists no test",
		"contract.yaml: promise 3 (gone): test TestStep9_Gone: no function TestStep9_Gone",
		"contract.yaml: TestStep2_Unlisted is listed by no promise",
		"contract.yaml: promise adds: subtest TestStep1_Adds/renamed_subtest did not run on the solution (ran: none)",
		"contract.yaml: promise gone: TestStep9_Gone did not run on the solution",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
	if r.HintsOK {
		t.Error("HintsOK = true for a step without hints")
	}
}

func TestRunExitCodes(t *testing.T) {
	cfg := fixtureConfig(t)
	var out, errOut strings.Builder
	if code := run(context.Background(), []string{"-root", cfg.Root, "-race=false", "-count", "1", "02_leaky"}, &out, &errOut); code != 1 {
		t.Errorf("a lab with problems: exit %d, want 1\n%s%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "02_leaky") || !strings.Contains(out.String(), "problems") {
		t.Errorf("output lacks the table row or summary:\n%s", out.String())
	}
}

// make test must pass in a learner's checkout: with every stub replaced by
// its solution and a file of the learner's own added, labcheck still
// checks the stubs as committed and finds the same (here: no) problems
// with the stubs.
func TestCheckLabChecksTheCommittedStubs(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(fixtureConfig(t).Root)); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(git, append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q")
	run("add", "-A")
	run("commit", "-q", "-m", "course")
	// The learner solves the lab and adds a helper file.
	sol, err := os.ReadFile(filepath.Join(root, "solutions/01_demo/demo.go"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "labs/01_demo/demo.go"), string(sol))
	write(t, filepath.Join(root, "labs/01_demo/helper.go"), "package demo\n\n// Add is declared twice: this file alone breaks the build.\nfunc Add(a, b int) int { return a + b }\n")

	p, err := loadPristine(root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Overlay) != 2 || p.Overlay[filepath.Join("labs", "01_demo", "helper.go")] != "" {
		t.Fatalf("pristine overlay = %v, want the stub restored and the helper hidden", p.Overlay)
	}
	cfg := config{Root: root, Count: 1, Pristine: p}
	r := checkLab(context.Background(), cfg, "01_demo")
	if r.StubFailing != 2 || r.SolutionPass != 2 {
		t.Errorf("report = %+v, want the committed stub failing both steps and the solution passing", r)
	}
	for _, prob := range r.Problems {
		if !strings.Contains(prob, "survivor.patch") && !strings.Contains(prob, "stale.patch") && !strings.Contains(prob, "wrong.go") && !strings.Contains(prob, "sometimes.patch") {
			t.Errorf("unexpected problem in a solved checkout: %s", prob)
		}
	}
	// Without the pristine copy the solved stub would pass: the check
	// above is what keeps make test green for a learner.
	r = checkLab(context.Background(), config{Root: root, Count: 1}, "01_demo")
	if !strings.Contains(strings.Join(r.Problems, "\n"), "does not compile") && !strings.Contains(strings.Join(r.Problems, "\n"), "passes on the untouched stub") {
		t.Errorf("the solved checkout checked as it is: %q, want it to fail", r.Problems)
	}
}
