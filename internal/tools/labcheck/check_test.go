package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/lessons"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDiscoverAndStepTests(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "labs/02_lock/lock_test.go"), "package lock\nimport \"testing\"\nfunc TestStep1_A(t *testing.T) {}\nfunc TestHelperNotAStep(t *testing.T) {}\nfunc TestStep2_B(t *testing.T) {}\n")
	write(t, filepath.Join(root, "labs/01_cas/cas_test.go"), "package cas\n")
	write(t, filepath.Join(root, "labs/kv/kv.go"), "package kv\n")
	write(t, filepath.Join(root, "labs/labs.go"), "package labs\n")
	ids, err := discover(root)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []string{"01_cas", "02_lock"}) {
		t.Fatalf("discover = %v, want the two NN_ folders only", ids)
	}
	tests, err := stepTests(filepath.Join(root, "labs/02_lock"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tests, []string{"TestStep1_A", "TestStep2_B"}) {
		t.Fatalf("stepTests = %v", tests)
	}
}

func TestManifestProblems(t *testing.T) {
	lab := &lessons.Lab{Steps: []lessons.Step{
		{Test: "TestStep1_A", Hints: []string{"h"}},
		{Test: "TestStep2_B"},
		{Test: "TestStep9_Gone", Hints: []string{"h"}},
	}}
	got := strings.Join(manifestProblems(lab, []string{"TestStep1_A", "TestStep2_B", "TestStep3_C"}), "\n")
	for _, want := range []string{"TestStep2_B has no hint", "TestStep3_C has no step", "TestStep9_Gone: no such"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems %q lack %q", got, want)
		}
	}
	if p := manifestProblems(&lessons.Lab{Steps: []lessons.Step{{Test: "TestStep1_A", Hints: []string{"h"}}}}, []string{"TestStep1_A"}); len(p) != 0 {
		t.Errorf("a matching manifest has problems: %v", p)
	}
}

// result builds a grade.Result from test2json lines.
func result(lines ...string) *grade.Result {
	return grade.Parse(strings.NewReader(strings.Join(lines, "\n")))
}

func TestStubProblems(t *testing.T) {
	tests := []string{"TestStep1_A", "TestStep2_B", "TestStep3_C"}
	res := result(
		`{"Action":"run","Test":"TestStep1_A"}`, `{"Action":"fail","Test":"TestStep1_A"}`,
		`{"Action":"run","Test":"TestStep2_B"}`, `{"Action":"output","Test":"TestStep2_B","Output":"--- PASS: TestStep2_B (0.00s)\n"}`, `{"Action":"pass","Test":"TestStep2_B"}`,
		`{"Action":"fail"}`)
	n, probs := stubProblems(res, tests)
	if n != 1 {
		t.Errorf("failing = %d, want 1", n)
	}
	got := strings.Join(probs, "\n")
	if !strings.Contains(got, "TestStep2_B passes on the untouched stub") || !strings.Contains(got, "TestStep3_C is not run") {
		t.Errorf("problems = %q", got)
	}
	build := result(`{"Action":"build-fail"}`, `{"Action":"fail","FailedBuild":"x"}`)
	if _, probs := stubProblems(build, tests); len(probs) != 1 || !strings.Contains(probs[0], "does not compile") {
		t.Errorf("a stub that does not compile: %v", probs)
	}
}

func TestSolutionAndMutantProblems(t *testing.T) {
	tests := []string{"TestStep1_A"}
	twice := result(
		`{"Action":"run","Test":"TestStep1_A"}`, `{"Action":"output","Test":"TestStep1_A","Output":"--- PASS: TestStep1_A (0.00s)\n"}`, `{"Action":"pass","Test":"TestStep1_A"}`,
		`{"Action":"run","Test":"TestStep1_A"}`, `{"Action":"output","Test":"TestStep1_A","Output":"--- PASS: TestStep1_A (0.00s)\n"}`, `{"Action":"pass","Test":"TestStep1_A"}`,
		`{"Action":"pass"}`)
	if n, probs := solutionProblems(twice, tests, 2); n != 1 || len(probs) != 0 {
		t.Errorf("two clean runs: n=%d probs=%v", n, probs)
	}
	if _, probs := solutionProblems(twice, tests, 3); len(probs) != 1 {
		t.Errorf("too few runs not reported: %v", probs)
	}
	flaky := result(
		`{"Action":"run","Test":"TestStep1_A"}`, `{"Action":"output","Test":"TestStep1_A","Output":"--- PASS: TestStep1_A (0.00s)\n"}`, `{"Action":"pass","Test":"TestStep1_A"}`,
		`{"Action":"run","Test":"TestStep1_A"}`, `{"Action":"output","Test":"TestStep1_A","Output":"    a_test.go:3: boom\n"}`, `{"Action":"fail","Test":"TestStep1_A"}`,
		`{"Action":"fail"}`)
	if _, probs := solutionProblems(flaky, tests, 2); len(probs) != 1 || !strings.Contains(probs[0], "1 of 2 runs") || !strings.Contains(probs[0], "boom") {
		t.Errorf("a flaky solution: %v", probs)
	}
	if p := mutantProblem("m.go", twice, tests); !strings.Contains(p, "passes every test") {
		t.Errorf("an uncaught mutant: %q", p)
	}
	if p := mutantProblem("m.go", flaky, tests); p != "" {
		t.Errorf("a caught mutant reported %q", p)
	}
}

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	writeTable(&b, []report{{ID: "01_cas", Steps: 5, StubFailing: 5, SolutionPass: 4, Mutants: 3, MutantsCaught: 3, HintsOK: true}}, config{Count: 3, Race: true})
	out := b.String()
	for _, want := range []string{"solution x3 -race", "01_cas", "5/5", "4/5 pass", "3/3", "ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(t.Context(), []string{"-count", "0"}, &out, &errOut); code != 2 {
		t.Errorf("-count 0: exit %d, want 2", code)
	}
	root := t.TempDir()
	write(t, filepath.Join(root, "labs/01_cas/lab.yaml"), "id: 01_cas\n")
	if code := run(t.Context(), []string{"-root", root, "99_nope"}, &out, &errOut); code != 2 {
		t.Errorf("unknown lab: exit %d, want 2", code)
	}
}

func TestStubTextProblems(t *testing.T) {
	good := "package x\n\nfunc F() error {\n\t// TODO: write F.\n\treturn labs.ErrNotImplemented\n}\n"
	if p := stubTextProblems(good); len(p) != 0 {
		t.Errorf("a proper stub: %v", p)
	}
	if p := stubTextProblems("package x\n\nfunc F() error { return nil }\n"); len(p) != 2 {
		t.Errorf("a stub without TODO or ErrNotImplemented: %v, want 2 problems", p)
	}
}

// Every lab needs a contract: a lab folder without contract.yaml is a
// problem, one with a contract that parses is counted.
func TestContractRequired(t *testing.T) {
	dir := t.TempDir()
	r := report{Promises: -1}
	c := &labCheck{id: "01_x", r: &r, dir: dir}
	c.readContract()
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "no contract.yaml") || r.Promises != -1 {
		t.Fatalf("a lab without a contract: problems %q, promises %d", r.Problems, r.Promises)
	}
	write(t, filepath.Join(dir, "x_test.go"), "package x\nimport \"testing\"\nfunc TestStep1_A(t *testing.T) {}\n")
	write(t, filepath.Join(dir, "README.md"), "# x\n")
	write(t, filepath.Join(dir, ContractFile), "promises:\n  - id: a\n    says: A does a.\n    from: README.md\n    tests: [TestStep1_A]\n")
	r = report{Promises: -1}
	c = &labCheck{id: "01_x", r: &r, dir: dir, tests: []string{"TestStep1_A"}}
	c.readContract()
	if len(r.Problems) != 0 || r.Promises != 1 {
		t.Fatalf("a lab with a good contract: problems %q, promises %d", r.Problems, r.Promises)
	}
	write(t, filepath.Join(dir, ContractFile), "promises:\n  - id: a\n    sayz: typo\n")
	r = report{Promises: -1}
	c = &labCheck{id: "01_x", r: &r, dir: dir, tests: []string{"TestStep1_A"}}
	c.readContract()
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "sayz") {
		t.Fatalf("a contract with an unknown field: problems %q", r.Problems)
	}
}
