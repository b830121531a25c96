package lab

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/internal/tui/theme"
	"github.com/ownership-election/playground/lessons"
)

// fixtureRoot is the tiny module under testdata with one lab, 00_demo,
// whose first step passes and second fails.
const fixtureRoot = "testdata/course"

func demoLab() lessons.Lab {
	return lessons.Lab{
		ID: "00_demo", Title: "Demo arithmetic", Lesson: "do-you-need-an-election", File: "demo.go",
		Steps: []lessons.Step{
			{Test: "TestStep1_Adds", Title: "Add two numbers", Hints: []string{"Use the plus operator."}},
			{Test: "TestStep2_Doubles", Title: "Double a number", Hints: []string{
				"Twice a number is the number added to itself.", "Return n * 2."}},
		},
	}
}

// demoLesson is the lesson demoLab belongs to.
func demoLesson() *lessons.Lesson {
	return &lessons.Lesson{Number: 1, ID: "do-you-need-an-election", Title: "Do you need an election?", Labs: []string{"00_demo"}}
}

var fixedNow = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)

func testStyles() *theme.Styles {
	st := theme.NewStyles(true, true)
	return &st
}

// testContext is what the root gives a screen, with the tests' styles.
func testContext() screen.Context { return screen.Context{Styles: *testStyles()} }

func newTest(t *testing.T, root string, w, h int) *Model {
	t.Helper()
	m := New(testContext(), Options{Lab: demoLab(), Root: root, Lesson: demoLesson(), Now: func() time.Time { return fixedNow }})
	m.SetSize(w, h)
	// Render the README the way the program would, so views are final.
	m = runCmd(t, m, m.Init())
	return m
}

// runCmd executes cmd and feeds what it returns back into Update, following
// batches, until nothing is left. Spinner ticks are dropped (they would
// loop forever) and so are editor launches.
func runCmd(t *testing.T, m *Model, cmd tea.Cmd) *Model {
	t.Helper()
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		msg := c()
		switch msg := msg.(type) {
		case nil:
		case tea.BatchMsg:
			queue = append(queue, msg...)
		case spinner.TickMsg:
		default:
			var next tea.Cmd
			_, next = m.Update(msg)
			queue = append(queue, next)
		}
	}
	return m
}

func press(t *testing.T, m *Model, keys ...string) (*Model, tea.Cmd) {
	t.Helper()
	var cmd tea.Cmd
	for _, k := range keys {
		_, cmd = m.Update(keyMsg(k))
	}
	return m, cmd
}

func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	}
	r := []rune(k)
	return tea.KeyPressMsg{Code: r[0], Text: k}
}

func view(m *Model) string { return ansi.Strip(m.View()) }

func failingReport() report {
	lab := demoLab()
	return report{
		Steps: []stepResult{
			{Step: grade.Step{Test: lab.Steps[0].Test, Title: lab.Steps[0].Title, Status: grade.Pass}, Hints: lab.Steps[0].Hints},
			{Step: grade.Step{Test: lab.Steps[1].Test, Title: lab.Steps[1].Title, Status: grade.Fail,
				Failure: []string{"demo_test.go:13: Double(21) = 21, want 42"}}, Hints: lab.Steps[1].Hints},
		},
		Elapsed: 800 * time.Millisecond,
	}
}

func passingReport() report {
	r := failingReport()
	r.Steps[1].Status, r.Steps[1].Failure = grade.Pass, nil
	r.RunPassed = true
	r.Lab = &grade.Report{Status: grade.LabUnverified}
	return r
}

// verified pretends the verification of the last grade ended in status.
func verified(t *testing.T, m *Model, status grade.LabStatus, message string) (*Model, tea.Cmd) {
	t.Helper()
	_, cmd := m.Update(verifyDoneMsg{seq: m.seq, lab: &grade.Report{Status: status, Message: message}})
	return m, cmd
}

// deliver pretends the grade in flight finished with r.
func deliver(t *testing.T, m *Model, r report) (*Model, tea.Cmd) {
	t.Helper()
	if !m.grading {
		t.Fatal("no grade in flight")
	}
	_, cmd := m.Update(gradeDoneMsg{seq: m.seq, report: r})
	return m, cmd
}

func TestFreshScreenListsStepsNotGraded(t *testing.T) {
	m := newTest(t, fixtureRoot, 80, 24)
	v := view(m)
	for _, want := range []string{"Lab 1.1 · Demo arithmetic", "you edit labs/00_demo/demo.go", "README"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	m, _ = press(t, m, "tab")
	v = view(m)
	for _, want := range []string{"not graded yet", "· 1. Add two numbers", "· 2. Double a number", "press enter"} {
		if !strings.Contains(v, want) {
			t.Errorf("results pane lacks %q:\n%s", want, v)
		}
	}
}

func TestGradeShowsSpinnerAndCancelDropsLateResult(t *testing.T) {
	m := newTest(t, fixtureRoot, 80, 24)
	m, cmd := press(t, m, "enter")
	if cmd == nil || !m.grading || !m.Capturing() {
		t.Fatalf("enter did not start grading (grading=%v)", m.grading)
	}
	if v := view(m); !strings.Contains(v, "Grading… 0.0s · x cancels") || strings.Contains(v, "first build") {
		t.Fatalf("no spinner line while grading:\n%s", v)
	}
	seq := m.seq
	m, _ = press(t, m, "esc")
	if m.grading || m.Capturing() {
		t.Fatal("esc did not cancel the grade")
	}
	if v := view(m); !strings.Contains(v, "Grading cancelled.") {
		t.Fatalf("no cancel notice:\n%s", v)
	}
	_, _ = m.Update(gradeDoneMsg{seq: seq, report: failingReport()})
	if m.report != nil {
		t.Fatal("a cancelled run's result was shown")
	}
}

func TestSpinnerShowsElapsedTime(t *testing.T) {
	now := fixedNow
	m := New(testContext(), Options{Lab: demoLab(), Root: fixtureRoot, Now: func() time.Time { return now }})
	m = runCmd(t, m, m.Init())
	m.SetSize(80, 24)
	m, _ = press(t, m, "g")
	now = now.Add(42 * time.Second)
	if v := view(m); !strings.Contains(v, "Grading… 42s") || !strings.Contains(v, "a first build takes minutes") {
		t.Fatalf("elapsed time not shown:\n%s", v)
	}
}

func TestFailureAndHintsOneAtATime(t *testing.T) {
	m := newTest(t, fixtureRoot, 80, 24)
	m, _ = press(t, m, "h")
	if v := view(m); !strings.Contains(v, "Grade first") {
		t.Fatalf("h before grading should say to grade first:\n%s", v)
	}
	m, _ = press(t, m, "enter")
	m, cmd := deliver(t, m, failingReport())
	if cmd != nil {
		if _, ok := cmd().(screen.LabPassed); ok {
			t.Fatal("a failing grade reported screen.LabPassed")
		}
	}
	v := view(m)
	for _, want := range []string{"1 of 2 passed", "✓ 1. Add two numbers", "✗ 2. Double a number",
		"Step 2 failed · TestStep2_Doubles", "demo_test.go:13: Double(21) = 21, want 42", "Press h for a hint (2 available)"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "Twice a number") {
		t.Fatal("a hint was shown before h")
	}
	m, _ = press(t, m, "h")
	v = view(m)
	if !strings.Contains(v, "Twice a number is the number added to itself.") || strings.Contains(v, "Return n * 2.") {
		t.Fatalf("first h should open exactly the first hint:\n%s", v)
	}
	if !strings.Contains(v, "1 of 2 · h for the next") {
		t.Errorf("hint counter missing:\n%s", v)
	}
	m, _ = press(t, m, "h")
	if v = view(m); !strings.Contains(v, "Return n * 2.") {
		t.Fatalf("second h should open the second hint:\n%s", v)
	}
	m, _ = press(t, m, "h")
	if v = view(m); !strings.Contains(v, "last hint") {
		t.Fatalf("a third h should say there are no more:\n%s", v)
	}
	if m.hintsOpen["TestStep2_Doubles"] != 2 || m.hintsOpen["TestStep1_Adds"] != 0 {
		t.Fatalf("hints open = %v", m.hintsOpen)
	}
}

func TestCompileErrorsShowFileLine(t *testing.T) {
	m := newTest(t, fixtureRoot, 80, 24)
	m, _ = press(t, m, "enter")
	r := failingReport()
	r.Steps[0].Status, r.Steps[1].Status, r.Steps[1].Failure = grade.NotRun, grade.NotRun, nil
	r.BuildErrors = []string{"labs/00_demo/demo.go:9:9: undefined: nn"}
	m, _ = deliver(t, m, r)
	v := view(m)
	for _, want := range []string{"Does not compile", "labs/00_demo/demo.go:9:9: undefined: nn", "(not run)", "Press h for a hint (1 available)"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	// With nothing run, the hints are those of the first step that did not pass.
	m, _ = press(t, m, "h")
	if v = view(m); !strings.Contains(v, "Use the plus operator.") {
		t.Fatalf("hint for step 1 missing:\n%s", v)
	}
}

func TestTimeoutSaysWhatToLookFor(t *testing.T) {
	m := newTest(t, fixtureRoot, 80, 24)
	m, _ = press(t, m, "enter")
	r := failingReport()
	r.Steps[1].Status, r.Steps[1].Failure = grade.NotRun, nil
	r.TimedOut = true
	r.Message = "timed out after 30s: TestStep2_Doubles did not finish (an endless loop, or waiting for something that never happens?)"
	m, _ = deliver(t, m, r)
	v := view(m)
	for _, want := range []string{"Timed out", "timed out after 30s: TestStep2_Doubles did not finish", "endless loop"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
}

func TestPassingGradeReportsPassedAndOpensSolution(t *testing.T) {
	m := newTest(t, fixtureRoot, 80, 24)
	m, _ = press(t, m, "enter")
	m, cmd := deliver(t, m, passingReport())
	if cmd == nil {
		t.Fatal("no verification after a passing grade")
	}
	if m.passed || !strings.Contains(view(m), "verifying") {
		t.Fatalf("a first pass counted before its verification:\n%s", view(m))
	}
	m, cmd = verified(t, m, grade.LabPassed, "")
	if cmd == nil {
		t.Fatal("no command after a verified pass")
	}
	if got, ok := cmd().(screen.LabPassed); !ok || got.Lab != "00_demo" {
		t.Fatalf("verified pass sent %#v, want screen.LabPassed{00_demo}", got)
	}
	if v := view(m); !strings.Contains(v, "Passed and verified") {
		t.Fatalf("verification not shown:\n%s", v)
	}
	if v := view(m); !strings.Contains(v, "all 2 passed") || !strings.Contains(v, "✓ passed") {
		t.Fatalf("pass not shown:\n%s", v)
	}
	m, cmd = press(t, m, "s")
	if m.confirm != confirmNone {
		t.Fatal("after passing, s must not ask")
	}
	m = runCmd(t, m, cmd)
	v := view(m)
	if !strings.Contains(v, "Your file → solution") || !strings.Contains(v, "+func Double(n int) int { return 2 * n }") {
		t.Fatalf("solution not shown:\n%s", v)
	}
}

func TestSolutionBeforePassingNeedsYes(t *testing.T) {
	m := newTest(t, fixtureRoot, 80, 24)
	m, cmd := press(t, m, "s")
	if cmd != nil || !m.Capturing() {
		t.Fatal("s before passing must ask first")
	}
	if v := view(m); !strings.Contains(v, "Show the reference solution anyway? (y/n)") {
		t.Fatalf("no question:\n%s", v)
	}
	m, cmd = press(t, m, "n")
	if cmd != nil || m.solution != "" || m.Capturing() {
		t.Fatal("n must show nothing")
	}
	m, _ = press(t, m, "s")
	m, cmd = press(t, m, "y")
	m = runCmd(t, m, cmd)
	if !strings.Contains(view(m), "return 2 * n") {
		t.Fatalf("y did not show the solution:\n%s", view(m))
	}
}

// copyFixture copies the fixture module to a temp dir so tests may change it.
func copyFixture(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(fixtureRoot, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(fixtureRoot, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestResetKeepsLearnerCodeAside(t *testing.T) {
	root := copyFixture(t)
	stub := filepath.Join(root, "labs/00_demo/demo.go")
	orig, _ := os.ReadFile(stub)
	mine := []byte("package demo\n\n// my attempt\nfunc Add(a, b int) int { return a - b }\n")
	if err := os.WriteFile(stub, mine, 0o644); err != nil {
		t.Fatal(err)
	}
	catalog := fstest.MapFS{"00_demo/demo.go": {Data: orig}}
	m := New(testContext(), Options{Lab: demoLab(), Root: root, Catalog: catalog, Now: func() time.Time { return fixedNow }})
	m = runCmd(t, m, m.Init())
	m.SetSize(80, 24)
	m = runCmd(t, m, m.Init())
	m, cmd := press(t, m, "r")
	if cmd != nil || !strings.Contains(view(m), "Your code is kept aside. (y/n)") {
		t.Fatalf("r must ask first:\n%s", view(m))
	}
	m, _ = press(t, m, "esc")
	if got, _ := os.ReadFile(stub); string(got) != string(mine) {
		t.Fatal("esc at the question changed the stub")
	}
	m, _ = press(t, m, "r")
	m, cmd = press(t, m, "y")
	m = runCmd(t, m, cmd)
	if got, _ := os.ReadFile(stub); string(got) != string(orig) {
		t.Fatalf("stub not reset:\n%s", got)
	}
	backup := stub + ".bak-20261129-090000"
	if got, err := os.ReadFile(backup); err != nil || string(got) != string(mine) {
		t.Fatalf("learner's code not kept in %s: %v %q", backup, err, got)
	}
	if v := view(m); !strings.Contains(v, "Stub reset. Your code is kept in labs/00_demo/demo.go.bak-20261129-090000") {
		t.Fatalf("no notice after reset:\n%s", v)
	}
	// A second reset at the same second must not overwrite the first backup.
	if err := os.WriteFile(stub, []byte("package demo // second try\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, cmd = press(t, m, "r")
	m, cmd = press(t, m, "y")
	m = runCmd(t, m, cmd)
	if got, _ := os.ReadFile(backup); string(got) != string(mine) {
		t.Fatal("the first backup was overwritten")
	}
	if got, err := os.ReadFile(backup + "-2"); err != nil || !strings.Contains(string(got), "second try") {
		t.Fatalf("second backup missing: %v", err)
	}
}

func TestResetWithoutOriginalTouchesNothing(t *testing.T) {
	root := copyFixture(t) // not a git repository, and no catalogue
	stub := filepath.Join(root, "labs/00_demo/demo.go")
	mine := []byte("package demo // mine\n")
	if err := os.WriteFile(stub, mine, 0o644); err != nil {
		t.Fatal(err)
	}
	m := New(testContext(), Options{Lab: demoLab(), Root: root, Now: func() time.Time { return fixedNow }})
	m = runCmd(t, m, m.Init())
	m.SetSize(80, 24)
	m, _ = press(t, m, "r")
	m, cmd := press(t, m, "y")
	m = runCmd(t, m, cmd)
	if got, _ := os.ReadFile(stub); string(got) != string(mine) {
		t.Fatal("stub changed although there was no original to restore")
	}
	if !m.noticeErr || !strings.Contains(m.notice, "no original copy") {
		t.Fatalf("notice = %q (err=%v)", m.notice, m.noticeErr)
	}
}

func TestLabsAbsentExplainsHowToGetThem(t *testing.T) {
	m := newTest(t, "", 80, 24) // not run from a checkout
	v := view(m)
	for _, want := range []string{"labs not found on this machine", "The labs are not on this machine", "git clone " + RepoURL, "go run ./cmd/playground"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	for _, k := range []string{"enter", "w", "e", "r", "s"} {
		if _, cmd := press(t, m, k); cmd != nil {
			t.Errorf("%s did something without labs", k)
		}
	}
}

// Inside a checkout that lacks the lab's folder, the screen says the folder
// is missing and how to restore it, not that the program was installed.
func TestLabMissingFromCheckout(t *testing.T) {
	root := t.TempDir()
	m := newTest(t, root, 100, 30)
	v := view(m)
	for _, want := range []string{"labs/00_demo missing from this checkout", "labs/00_demo is missing", "git restore labs/00_demo"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "installed as a program") || strings.Contains(v, "git clone") {
		t.Errorf("a checkout is told to clone the course:\n%s", v)
	}
}

func TestEditorFromEnvironment(t *testing.T) {
	t.Setenv("VISUAL", "")
	t.Setenv("EDITOR", "code --wait")
	m := New(testContext(), Options{Lab: demoLab(), Root: fixtureRoot})
	m = runCmd(t, m, m.Init())
	if got := strings.Join(m.editorCommand(), " "); got != "code --wait" {
		t.Fatalf("editor = %q", got)
	}
	t.Setenv("VISUAL", "nvim")
	if got := strings.Join(m.editorCommand(), " "); got != "nvim" {
		t.Fatalf("VISUAL should win: %q", got)
	}
	t.Setenv("VISUAL", "")
	t.Setenv("EDITOR", "")
	if got := strings.Join(m.editorCommand(), " "); got != "vi" {
		t.Fatalf("fallback = %q", got)
	}
}

func TestEditorErrorIsShownAndSuccessRegrades(t *testing.T) {
	m := newTest(t, fixtureRoot, 80, 24)
	_, _ = m.Update(editorDoneMsg{err: errors.New("open demo.go in nope: not found")})
	if !strings.Contains(view(m), "not found") || m.grading {
		t.Fatalf("editor error not shown:\n%s", view(m))
	}
	_, cmd := m.Update(editorDoneMsg{})
	if cmd == nil || !m.grading {
		t.Fatal("coming back from the editor should grade")
	}
}

func TestFitsTheScreen(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}, {200, 60}, {60, 15}, {30, 8}} {
		w, h := size[0], size[1]
		m := newTest(t, fixtureRoot, w, h)
		m, _ = press(t, m, "enter")
		r := failingReport()
		r.Steps[1].Failure = append(r.Steps[1].Failure, strings.Repeat("a very long line of test output ", 12))
		m, _ = deliver(t, m, r)
		m, _ = press(t, m, "h", "h")
		m.setNotice("a notice far too long for one line: "+strings.Repeat("word ", 60), true)
		for _, pane := range []string{"results", "readme"} {
			lines := strings.Split(view(m), "\n")
			if len(lines) != h {
				t.Errorf("%dx%d %s: %d lines", w, h, pane, len(lines))
			}
			for i, l := range lines {
				if lw := ansi.StringWidth(l); lw > w {
					t.Errorf("%dx%d %s: line %d is %d wide: %q", w, h, pane, i, lw, l)
				}
			}
			m, _ = press(t, m, "tab")
		}
	}
}

func TestResetFallsBackToGitHead(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git on this machine")
	}
	root := copyFixture(t)
	git := func(args ...string) {
		t.Helper()
		c := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		c.Dir = root
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "fixture")
	stub := filepath.Join(root, "labs/00_demo/demo.go")
	orig, _ := os.ReadFile(stub)
	if err := os.WriteFile(stub, []byte("package demo // mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The embedded catalogue has no 00_demo, so the original must come from git.
	m := New(testContext(), Options{Lab: demoLab(), Root: root, Now: func() time.Time { return fixedNow }})
	m = runCmd(t, m, m.Init())
	m.SetSize(80, 24)
	m, _ = press(t, m, "r")
	m, cmd := press(t, m, "y")
	m = runCmd(t, m, cmd)
	if got, _ := os.ReadFile(stub); string(got) != string(orig) {
		t.Fatalf("stub not restored from git: %q (notice %q)", got, m.notice)
	}
	if got, _ := os.ReadFile(stub + ".bak-20261129-090000"); string(got) != "package demo // mine\n" {
		t.Fatalf("learner's code not kept: %q", got)
	}
}

func TestLabWithoutManifestDoesNotEdit(t *testing.T) {
	m := New(testContext(), Options{Lab: lessons.Lab{ID: "00_demo", Title: "00_demo"}, Root: fixtureRoot})
	m = runCmd(t, m, m.Init())
	m.SetSize(80, 24)
	for _, k := range []string{"e", "r", "s"} {
		m2, _ := press(t, m, k)
		if m2.confirm != confirmNone || !strings.Contains(m2.notice, "no manifest") {
			t.Errorf("%s on a lab without manifest: confirm=%v notice=%q", k, m2.confirm, m2.notice)
		}
	}
}

func TestShortHelpFollowsState(t *testing.T) {
	helpKeys := func(m *Model) string {
		var ks []string
		for _, b := range m.ShortHelp() {
			if b.Enabled() {
				ks = append(ks, b.Help().Key)
			}
		}
		return strings.Join(ks, " ")
	}
	m := newTest(t, fixtureRoot, 80, 24)
	if got := helpKeys(m); got != "enter/g w e tab" {
		t.Errorf("fresh: %q", got)
	}
	m, _ = press(t, m, "enter")
	if got := helpKeys(m); got != "x/esc w tab" {
		t.Errorf("grading: %q", got)
	}
	m, _ = deliver(t, m, failingReport())
	if got := helpKeys(m); got != "g enter h w tab" {
		t.Errorf("failing: %q", got)
	}
	m, _ = press(t, m, "h", "h")
	if got := helpKeys(m); got != "g enter w tab" {
		t.Errorf("all hints open: %q", got)
	}
	m, _ = press(t, m, "s")
	if got := helpKeys(m); got != "y n/esc" {
		t.Errorf("question: %q", got)
	}
	if len(m.FullHelp()) != 3 {
		t.Errorf("full help has %d columns", len(m.FullHelp()))
	}
}

func TestLongFailureIsCut(t *testing.T) {
	m := newTest(t, fixtureRoot, 80, 24)
	m, _ = press(t, m, "enter")
	r := failingReport()
	r.Steps[1].Failure = nil
	for i := 1; i <= 40; i++ {
		r.Steps[1].Failure = append(r.Steps[1].Failure, "goroutine frame "+strings.Repeat("x", i%5)+"#"+string(rune('a'+i%26)))
	}
	m, _ = deliver(t, m, r)
	v := view(m)
	if !strings.Contains(v, "… 31 more lines: enter opens step 2 with all of them") {
		t.Fatalf("long failure not cut:\n%s", v)
	}
	if !strings.Contains(v, "Press h for a hint") {
		t.Fatalf("hint line pushed off the screen:\n%s", v)
	}
}

// A pass that the race detector refutes is shown as racy and never
// reported to the root as passed.
func TestRacyPassIsNotPassed(t *testing.T) {
	m := newTest(t, fixtureRoot, 100, 30)
	m, _ = press(t, m, "enter")
	m, _ = deliver(t, m, passingReport())
	m, cmd := verified(t, m, grade.LabRacy, "failed 2 of 5 runs under -race: a data race in step 2 (TestStep2_Doubles)")
	if cmd != nil {
		if _, ok := cmd().(screen.LabPassed); ok {
			t.Fatal("a racy solution was reported as passed")
		}
	}
	v := view(m)
	if m.passed || !strings.Contains(v, "Racy: not passed") || !strings.Contains(v, "failed 2 of 5 runs under -race") {
		t.Fatalf("racy verification not shown:\n%s", v)
	}
}

// TestPassedBeforeIsNotPassedNow: a lab passed earlier that fails the grade
// on screen does not say "✓ passed", and the root hears of the failing
// grade and its first failing step.
func TestPassedBeforeIsNotPassedNow(t *testing.T) {
	m := New(testContext(), Options{Lab: demoLab(), Root: fixtureRoot, Passed: true, Now: func() time.Time { return fixedNow }})
	m.SetSize(100, 30)
	m = runCmd(t, m, m.Init())
	if v := view(m); !strings.Contains(v, "✓ passed before") {
		t.Fatalf("a lab passed earlier does not say so before grading:\n%s", v)
	}
	m, _ = press(t, m, "enter")
	m, cmd := deliver(t, m, failingReport())
	v := view(m)
	if strings.Contains(v, "✓ passed") || !strings.Contains(v, "passed before · fails now") {
		t.Fatalf("header after a failing grade of a lab passed before:\n%s", v)
	}
	if cmd == nil {
		t.Fatal("a failing grade sent nothing to the root")
	}
	got, ok := cmd().(screen.LabGraded)
	want := screen.LabGraded{Lab: "00_demo", Status: "failing", Step: "step 2 (Double a number)"}
	if !ok || got != want {
		t.Fatalf("failing grade sent %#v, want %#v", got, want)
	}
}

func TestRacyPassIsRecordedAsRacy(t *testing.T) {
	m := newTest(t, fixtureRoot, 80, 24)
	m, _ = press(t, m, "enter")
	m, _ = deliver(t, m, passingReport())
	_, cmd := verified(t, m, grade.LabRacy, "DATA RACE")
	if cmd == nil {
		t.Fatal("a racy verification sent nothing to the root")
	}
	if got, ok := cmd().(screen.LabGraded); !ok || got.Status != "racy" {
		t.Fatalf("racy verification sent %#v", got)
	}
}

// TestComingBackShowsTheLastGrade: a lab graded before says how that grade
// ended instead of "Not graded yet".
func TestComingBackShowsTheLastGrade(t *testing.T) {
	last := &progress.LabGrade{Status: "failing", Step: "step 2 (Double a number)", At: fixedNow}
	m := New(testContext(), Options{Lab: demoLab(), Root: fixtureRoot, Last: last, Now: func() time.Time { return fixedNow }})
	m.SetSize(100, 30)
	m = runCmd(t, m, m.Init())
	v := view(m)
	if strings.Contains(v, "Not graded yet") || !strings.Contains(v, ": failing at step 2 (Double a number) · enter grades it again") {
		t.Fatalf("the last grade is not shown:\n%s", v)
	}
}

// TestHintsForTheStepUnderTheCursor: h opens the hints of the step under
// the cursor in the list, not the first failing one (it opens that step
// to show them); on a step that passed it says so; and that notice goes
// with the next key that moves on, stale once the cursor moved.
func TestHintsForTheStepUnderTheCursor(t *testing.T) {
	m := newTest(t, fixtureRoot, 80, 24)
	m, _ = press(t, m, "enter")
	r := failingReport()
	r.Steps[0].Status, r.Steps[0].Failure = grade.Fail, []string{"demo_test.go:7: Add(1, 2) = 0, want 3"}
	m, _ = deliver(t, m, r)
	m, _ = press(t, m, "j") // the cursor from step 1, the first failing, to step 2
	m, _ = press(t, m, "h")
	v := view(m)
	if !strings.Contains(v, "Twice a number is the number added to itself.") || strings.Contains(v, "Use the plus operator.") {
		t.Fatalf("h with the cursor on step 2 opened other hints:\n%s", v)
	}
	if m.hintsOpen["TestStep2_Doubles"] != 1 || m.hintsOpen["TestStep1_Adds"] != 0 {
		t.Fatalf("hints open = %v", m.hintsOpen)
	}

	m = newTest(t, fixtureRoot, 80, 24)
	m, _ = press(t, m, "enter")
	m, _ = deliver(t, m, failingReport())
	m, _ = press(t, m, "k") // the cursor from step 2 to step 1, which passed
	m, _ = press(t, m, "h")
	if v := view(m); !strings.Contains(v, "This step passes: no hints needed.") || strings.Contains(v, "Twice a number") {
		t.Fatalf("h on a passing step:\n%s", v)
	}
	m, _ = press(t, m, "j")
	if v := view(m); strings.Contains(v, "This step passes") {
		t.Fatalf("the notice stayed after the cursor moved on:\n%s", v)
	}
}
