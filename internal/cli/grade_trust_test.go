package cli

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/internal/progress"
)

// tempCheckout writes a learner's checkout of the course into a new
// folder: the course's files as this binary embeds them, stubs untouched.
func tempCheckout(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := grade.Builtin().WriteTo(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// casSteps are lab 01's step tests, from the course's test file.
func casSteps(t *testing.T, root string) []string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(root, "labs/01_cas/cas_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, m := range regexp.MustCompile(`(?m)^func (TestStep\w+)\(`).FindAllStringSubmatch(string(src), -1) {
		steps = append(steps, m[1])
	}
	if len(steps) < 5 {
		t.Fatalf("lab 01 has %d steps in its test file", len(steps))
	}
	return steps
}

// fakePasses is Go source whose init prints the testing package's lines
// for a passing run of steps (each prefixed with marker) and ends the
// process with status 0 before any test runs.
func fakePasses(steps []string, marker string) string {
	var b strings.Builder
	b.WriteString("package cas\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc init() {\n")
	for _, s := range steps {
		fmt.Fprintf(&b, "\tfmt.Print(%q)\n", fmt.Sprintf("%s=== RUN   %s\n%s--- PASS: %s (0.00s)\n", marker, s, marker, s))
	}
	fmt.Fprintf(&b, "\tfmt.Print(%q)\n\tos.Exit(0)\n}\n", marker+"PASS\n")
	return b.String()
}

// gradeCheckout grades lab 01 in root with --json and returns the exit
// code, the JSON report and the text of stdout and stderr.
func gradeCheckout(t *testing.T, root string, lab string) (int, jsonLab, string) {
	t.Helper()
	env, out, errb := gradeEnv(t)
	err := gradeLabs(context.Background(), env, []string{"--json", lab}, gradeConfig{Root: root})
	code := 0
	var ee *ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.Code
	case err != nil:
		t.Fatalf("grade: %v\n%s%s", err, out, errb)
	}
	var j jsonLab
	if jerr := json.Unmarshal(out.Bytes(), &j); jerr != nil {
		t.Fatalf("--json output does not parse: %v\n%s%s", jerr, out, errb)
	}
	return code, j, out.String() + errb.String()
}

func requireNotPassed(t *testing.T, lab string, code int, j jsonLab, text string) {
	t.Helper()
	if code == 0 || j.Passed || j.Status == "pass" {
		t.Errorf("exit %d, passed %v, status %q: a false pass\n%s", code, j.Passed, j.Status, text)
	}
	path, err := progress.DefaultPath()
	if err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(path); err == nil && strings.Contains(string(data), lab) {
		t.Errorf("the false pass went into progress:\n%s", data)
	}
}

// The false passes: a file beside the stub whose init prints a
// passing run and exits 0, plain and with test2json's ^V marker. The
// file is refused with a line naming it, and nothing passes.
func TestGradeRefusesAHelperThatFakesPasses(t *testing.T) {
	for name, marker := range map[string]string{"plain": "", "framing marker": "\x16"} {
		t.Run(name, func(t *testing.T) {
			root := tempCheckout(t)
			helper := filepath.Join(root, "labs/01_cas/zz_helpers.go")
			if err := os.WriteFile(helper, []byte(fakePasses(casSteps(t, root), marker)), 0o644); err != nil {
				t.Fatal(err)
			}
			code, j, text := gradeCheckout(t, root, "01_cas")
			requireNotPassed(t, "01_cas", code, j, text)
			if j.Status != "refused" || !strings.Contains(strings.Join(j.Refused, "\n"), "labs/01_cas/zz_helpers.go: not part of the lab") {
				t.Errorf("status %q, refused %q: want zz_helpers.go refused by name", j.Status, j.Refused)
			}
		})
	}
}

// Emptying the course's tests in the checkout changes nothing: the
// course's own copies are built, and the stub fails them.
func TestGradeUsesTheCoursesTests(t *testing.T) {
	root := tempCheckout(t)
	var b strings.Builder
	b.WriteString("package cas\n\nimport \"testing\"\n\n")
	for _, s := range casSteps(t, root) {
		fmt.Fprintf(&b, "func %s(t *testing.T) {}\n\n", s)
	}
	if err := os.WriteFile(filepath.Join(root, "labs/01_cas/cas_test.go"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, j, text := gradeCheckout(t, root, "01_cas")
	requireNotPassed(t, "01_cas", code, j, text)
	if j.Status != "fail" {
		t.Errorf("status %q, want the stub's plain fail\n%s", j.Status, text)
	}
}

// The same fake run from the stub itself, without the exit (which is
// refused): the steps still run and fail, whatever was printed first.
func TestGradeIgnoresFakePassLinesFromTheStub(t *testing.T) {
	root := tempCheckout(t)
	stub := filepath.Join(root, "labs/01_cas/cas.go")
	src, err := os.ReadFile(stub)
	if err != nil {
		t.Fatal(err)
	}
	fake := fakePasses(casSteps(t, root), "\x16")
	fake = strings.Replace(fake, "\tos.Exit(0)\n", "", 1)
	body := fake[strings.Index(fake, "func init()"):]
	src = []byte(strings.Replace(string(src), "import (", "import (\n\t\"fmt\"", 1) + "\n" + body)
	if err := os.WriteFile(stub, src, 0o644); err != nil {
		t.Fatal(err)
	}
	code, j, text := gradeCheckout(t, root, "01_cas")
	requireNotPassed(t, "01_cas", code, j, text)
	if j.Status != "fail" {
		t.Errorf("status %q, want fail\n%s", j.Status, text)
	}
}

// A stub that names os.Exit is refused with its line.
func TestGradeRefusesOsExitInTheStub(t *testing.T) {
	root := tempCheckout(t)
	stub := filepath.Join(root, "labs/01_cas/cas.go")
	src, err := os.ReadFile(stub)
	if err != nil {
		t.Fatal(err)
	}
	src = []byte(strings.Replace(string(src), "import (", "import (\n\t\"os\"", 1) + "\nvar quit = os.Exit\n")
	if err := os.WriteFile(stub, src, 0o644); err != nil {
		t.Fatal(err)
	}
	line := strings.Count(string(src), "\n")
	code, j, text := gradeCheckout(t, root, "01")
	requireNotPassed(t, "01_cas", code, j, text)
	want := fmt.Sprintf("labs/01_cas/cas.go:%d: calls os.Exit", line)
	if j.Status != "refused" || !strings.Contains(strings.Join(j.Refused, "\n"), want) {
		t.Errorf("refused %q, want %q", j.Refused, want)
	}
}

// solutionConfig grades a fresh checkout with lab's reference solution in
// place of its stub file.
func solutionConfig(t *testing.T, lab, file string) gradeConfig {
	t.Helper()
	sol := filepath.Join(repoRoot(t), "solutions", lab, file)
	return gradeConfig{Root: tempCheckout(t), Overlay: map[string]string{filepath.Join("labs", lab, file): sol}}
}

// A broken build cache says nothing about the learner's code: the lab is
// "not gradable" (exit 3), in every report, never failing.
func TestGradeBrokenBuildCacheIsNotGradable(t *testing.T) {
	root := tempCheckout(t)
	env, out, errb := gradeEnv(t)
	notDir := filepath.Join(t.TempDir(), "cache")
	if err := os.WriteFile(notDir, []byte("not a folder"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOCACHE", notDir)
	junit := filepath.Join(t.TempDir(), "report.xml")
	gs := filepath.Join(t.TempDir(), "results.json")
	err := gradeLabs(context.Background(), env, []string{"01", "--junit", junit, "--gradescope", gs}, gradeConfig{Root: root})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 3 {
		t.Fatalf("exit %v, want 3 (not gradable)\n%s%s", err, out, errb)
	}
	if !strings.Contains(out.String(), "NOT GRADABLE") {
		t.Errorf("text output:\n%s", out)
	}
	data, _ := os.ReadFile(junit)
	if !strings.Contains(string(data), `type="not-gradable"`) || strings.Contains(string(data), "<failure") {
		t.Errorf("JUnit of a lab that could not be graded:\n%s", data)
	}
	data, _ = os.ReadFile(gs)
	if !strings.Contains(string(data), "NOT-GRADABLE") {
		t.Errorf("results.json does not say so:\n%s", data)
	}
}

// The JUnit report has one case per step with its points, and results.json
// a test per step with score and max_score; the solution earns them all.
func TestGradeReportsPointsPerStep(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (6 s or more); make test runs it")
	}
	env, out, errb := gradeEnv(t)
	junit := filepath.Join(t.TempDir(), "report.xml")
	gs := filepath.Join(t.TempDir(), "results.json")
	if err := gradeLabs(context.Background(), env, []string{"01", "--junit", junit, "--gradescope", gs}, solutionConfig(t, "01_cas", "cas.go")); err != nil {
		t.Fatalf("grade: %v\n%s%s", err, out, errb)
	}
	var doc junitSuites
	data, _ := os.ReadFile(junit)
	if err := xml.Unmarshal(data, &doc); err != nil || len(doc.Suites) != 1 {
		t.Fatalf("JUnit: %v\n%s", err, data)
	}
	steps := casSteps(t, repoRoot(t))
	if cases := doc.Suites[0].Cases; len(cases) != len(steps) {
		t.Fatalf("%d cases for %d steps", len(cases), len(steps))
	}
	for _, c := range doc.Suites[0].Cases {
		if c.Failure != nil || len(c.Properties) != 2 || c.Properties[0] != (junitProperty{Name: "points", Value: "1"}) {
			t.Errorf("case %+v", c)
		}
	}
	var res gsResults
	data, _ = os.ReadFile(gs)
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Tests) != len(steps) || res.Score != float64(len(steps)) {
		t.Errorf("results.json: score %v over %d tests, want %d", res.Score, len(res.Tests), len(steps))
	}
	for _, tt := range res.Tests {
		if tt.MaxScore != 1 || tt.Score != 1 || tt.Status != "passed" || tt.Visibility == "" {
			t.Errorf("test %+v", tt)
		}
	}
}
