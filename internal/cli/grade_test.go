package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/internal/progress"
)

// repoRoot is the checkout these tests run in.
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := grade.FindRoot(wd)
	if root == "" {
		t.Fatal("not inside the checkout")
	}
	return root
}

func gradeEnv(t *testing.T) (*Env, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	t.Setenv("PLAYGROUND_STATE_DIR", t.TempDir())
	t.Setenv(grade.CacheDirEnv, t.TempDir())
	var out, errb bytes.Buffer
	return &Env{Stdout: &out, Stderr: &errb, Stdin: strings.NewReader("")}, &out, &errb
}

// The untouched stub fails: exit 1, each step shown with its title and
// first failure message, and valid --json and --junit output.
func TestGradeStubFails(t *testing.T) {
	_, _, _ = gradeEnv(t)
	t.Chdir(tempCheckout(t))
	junit := filepath.Join(t.TempDir(), "report.xml")
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"grade", "--json", "01_cas", "--junit", junit}, strings.NewReader(""), &out, &errb)
	if code != 1 {
		t.Fatalf("exit %d on the stub, want 1\n%s%s", code, out.String(), errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("--json printed %d lines, want one object for one lab:\n%s", len(lines), out.String())
	}
	var lab jsonLab
	if err := json.Unmarshal([]byte(lines[0]), &lab); err != nil {
		t.Fatalf("--json output does not parse: %v\n%s", err, lines[0])
	}
	if lab.Lab != "01_cas" || lab.Status != "fail" || lab.Passed || len(lab.Steps) == 0 || lab.Message == "" {
		t.Errorf("JSON report = %+v", lab)
	}
	for _, s := range lab.Steps {
		if s.Status == "pass" || s.Title == "" {
			t.Errorf("step %+v on the stub", s)
		}
	}
	if lab.Steps[0].Status == "fail" && lab.Steps[0].Message == "" {
		t.Errorf("failing step 1 has no message: %+v", lab.Steps[0])
	}
	data, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("--junit is not valid XML: %v\n%s", err, data)
	}
	if len(doc.Suites) != 1 || doc.Suites[0].Name != "01_cas" || doc.Suites[0].Failures == 0 || doc.Suites[0].Tests != len(lab.Steps) {
		t.Errorf("JUnit suites = %+v", doc.Suites)
	}
}

// The reference solution passes, is verified, and the pass is recorded in
// the learner's progress.
func TestGradeSolutionPasses(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (6 s or more); make test runs it")
	}
	env, out, errb := gradeEnv(t)
	cfg := solutionConfig(t, "01_cas", "cas.go")
	if err := gradeLabs(context.Background(), env, []string{"cas"}, cfg); err != nil {
		t.Fatalf("grade of the solution: %v\n%s%s", err, out.String(), errb.String())
	}
	text := out.String()
	for _, want := range []string{"lab 2.1 (01_cas)  Compare-and-swap with versions and TTL  (lesson 2: Consensus stores and compare-and-swap)", "ok   step 1:", "verifying: 5 more runs", "PASS: every step, verified", "1 of 1 labs passed",
		// The first verification says why it is slower, and how long it took.
		grade.FirstVerifyNote, "verification took "} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	// A step is listed as passed only once the runs under the race
	// detector are done.
	if v, ok := strings.Index(text, "verifying: 5 more runs"), strings.Index(text, "ok   step 1:"); v < 0 || ok < v {
		t.Errorf("a step is shown as passed before the verification:\n%s", text)
	}
	// The second one reuses the race build and does not say so again.
	out.Reset()
	if err := gradeLabs(context.Background(), env, []string{"cas"}, cfg); err != nil {
		t.Fatalf("second grade of the solution: %v\n%s", err, out.String())
	}
	if text := out.String(); strings.Contains(text, grade.FirstVerifyNote) || !strings.Contains(text, "verification took ") {
		t.Errorf("second verification's output, want no first-build note but the time it took:\n%s", text)
	}
	path, err := progress.DefaultPath()
	if err != nil {
		t.Fatal(err)
	}
	p, _ := progress.Load(path, time.Now())
	course, _, err := loadCourse(env, "")
	if err != nil {
		t.Fatal(err)
	}
	if lab := course.Lab("01_cas"); lab == nil || !p.LabPassed(lab.Lesson, lab.ID) {
		t.Errorf("the pass was not recorded in %s", path)
	}
}

func TestGradeUsage(t *testing.T) {
	env, _, _ := gradeEnv(t)
	var ue *UsageError
	if err := gradeLabs(context.Background(), env, []string{"99_nope"}, gradeConfig{Root: repoRoot(t)}); !errors.As(err, &ue) || !strings.Contains(err.Error(), "01_cas") {
		t.Errorf("unknown lab: %v, want a usage error listing the labs", err)
	}
	if err := gradeLabs(context.Background(), env, []string{"--bogus"}, gradeConfig{Root: repoRoot(t)}); !errors.As(err, &ue) {
		t.Errorf("unknown flag: %v, want a usage error", err)
	}
	sol := filepath.Join(repoRoot(t), "solutions", "01_cas", "cas.go")
	for _, args := range [][]string{{"--submission", sol}, {"--submission", sol, "cas", "lock"}, {"--submission", filepath.Join(t.TempDir(), "none.go"), "cas"}} {
		if err := gradeLabs(context.Background(), env, args, gradeConfig{}); !errors.As(err, &ue) {
			t.Errorf("grade %q: %v, want a usage error", args, err)
		}
	}
}

// grade --submission grades a file outside any checkout with the course
// built into the program (what class verify's child does) and records no
// pass: the file is not the learner's checkout.
func TestGradeSubmission(t *testing.T) {
	env, out, errb := gradeEnv(t)
	sol := filepath.Join(repoRoot(t), "solutions", "01_cas", "cas.go")
	t.Chdir(t.TempDir())
	if err := gradeLabs(context.Background(), env, []string{"--submission", sol, "cas"}, gradeConfig{}); err != nil {
		t.Fatalf("grade --submission of the solution: %v\n%s%s", err, out.String(), errb.String())
	}
	if text := out.String(); !strings.Contains(text, "PASS: every step, verified") {
		t.Errorf("output, want a verified pass:\n%s", text)
	}
	path, err := progress.DefaultPath()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("progress file %s: %v, want none written for a --submission grade", path, err)
	}
}

// Lab 04's Write without its mutex usually passes a plain run; the
// verification under the race detector must then report it as racy, not
// passed. Sometimes the Go runtime's own check on maps stops the plain
// run at once ("fatal error: concurrent map writes"): that run fails, and
// the message must say it is a race on a map. Both verdicts are right for
// this code; a pass, a flaky verdict or a bare crash is not.
func TestGradeRacyLab04(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (6 s or more); make test runs it")
	}
	env, out, _ := gradeEnv(t)
	root := repoRoot(t)
	sol, err := os.ReadFile(filepath.Join(root, "solutions/04_fencing/fencing.go"))
	if err != nil {
		t.Fatal(err)
	}
	patchText, err := os.ReadFile(filepath.Join(root, "solutions/04_fencing/testdata/mutants/unlocked_write.patch"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := grade.ParsePatch("unlocked_write.patch", string(patchText))
	if err != nil {
		t.Fatal(err)
	}
	racy, err := p.Apply(string(sol))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "fencing.go")
	if err := os.WriteFile(file, []byte(racy), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := gradeConfig{Root: tempCheckout(t), Overlay: map[string]string{"labs/04_fencing/fencing.go": file}}
	err = gradeLabs(context.Background(), env, []string{"--json", "04"}, cfg)
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 1 {
		t.Fatalf("grade of an unlocked Write: %v, want exit 1\n%s", err, out.String())
	}
	var lab jsonLab
	if err := json.Unmarshal(out.Bytes(), &lab); err != nil {
		t.Fatal(err)
	}
	t.Logf("verdict %s: %s", lab.Status, lab.Message)
	switch {
	case lab.Passed:
		t.Errorf("an unlocked Write passed: %+v", lab)
	case lab.Status == "racy" && (strings.Contains(lab.Message, "runs under -race: a data race") || strings.Contains(lab.Message, "runs under -race: step 4 (TestStep4_GCPauseScenario): a data race on a map")):
	case lab.Status == "fail" && strings.Contains(lab.Message, "crashed: a data race on a map") && strings.Contains(lab.Message, "fencing.go:"):
	default:
		t.Errorf("status %q message %q, want racy with the race's place, or failed on the runtime's concurrent map check with its place", lab.Status, lab.Message)
	}
}

// A step's pass is printed only when the runs under the race detector
// confirmed it: a step they failed is a failure, and a pass whose
// verification could not run says it is not verified.
func TestPrintStepsShowsOnlyConfirmedPasses(t *testing.T) {
	steps := func() []grade.Step {
		return []grade.Step{{Title: "One", Status: grade.Pass}, {Title: "Two", Status: grade.Pass}}
	}
	racy := &grade.Report{Status: grade.LabRacy, Steps: steps(), Verify: &grade.Verification{}}
	racy.Steps[1].Status = grade.Fail
	var b strings.Builder
	printSteps(&b, racy)
	if got := b.String(); !strings.Contains(got, "ok   step 1: One") || !strings.Contains(got, "FAIL step 2: Two") {
		t.Errorf("racy report printed:\n%s", got)
	}
	for _, st := range []grade.LabStatus{grade.LabUnverified, grade.LabError, grade.LabCanceled} {
		b.Reset()
		printSteps(&b, &grade.Report{Status: st, Steps: steps()})
		if got := b.String(); strings.Contains(got, "ok ") || !strings.Contains(got, "--   step 1: One (passed a first run; not verified under -race)") {
			t.Errorf("a %s report printed:\n%s", st, got)
		}
	}
}
