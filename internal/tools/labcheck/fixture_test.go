package main

import (
	"context"
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
	if r.Bugs != 2 || r.BugsCaught != 1 {
		t.Errorf("bugs caught %d/%d, want 1/2 (one is stale)", r.BugsCaught, r.Bugs)
	}
	if r.Variants != 2 || r.VariantsPass != 1 {
		t.Errorf("variants passing %d/%d, want 1/2", r.VariantsPass, r.Variants)
	}
	got := strings.Join(r.Problems, "\n")
	for _, want := range []string{
		"mutant survivor.patch passes every test",
		"stale patch stale.patch: hunk 1 matches 0 times",
		"variant wrong.go: TestStep2_Negative fails with the solution",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
	if len(r.Problems) != 3 {
		t.Errorf("problems = %q, want exactly the three above", r.Problems)
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
