package lab

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/grade"
)

// testRun is go test -json output for the demo lab: step 1 passes and
// logs two lines, step 2 fails after printing 20 lines (more than the
// results pane shows under the steps).
func testRun() *grade.Result {
	var ev []string
	add := func(test, action, out string) {
		if out != "" {
			ev = append(ev, fmt.Sprintf(`{"Action":"output","Test":%q,"Output":%q}`, test, out+"\n"))
			return
		}
		ev = append(ev, fmt.Sprintf(`{"Action":%q,"Test":%q,"Elapsed":0.25}`, action, test))
	}
	add("TestStep1_Adds", "run", "")
	add("TestStep1_Adds", "", "=== RUN   TestStep1_Adds")
	add("TestStep1_Adds", "", "    demo_test.go:8: Add(2, 3) = 5")
	add("TestStep1_Adds", "", "    demo_test.go:9: Add(-1, 1) = 0")
	add("TestStep1_Adds", "", "--- PASS: TestStep1_Adds (0.25s)")
	add("TestStep1_Adds", "pass", "")
	add("TestStep2_Doubles", "run", "")
	add("TestStep2_Doubles", "", "=== RUN   TestStep2_Doubles")
	for i := 1; i <= 20; i++ {
		add("TestStep2_Doubles", "", fmt.Sprintf("    demo_test.go:13: Double(%d) = %d, want %d", i, i, 2*i))
	}
	add("TestStep2_Doubles", "", "--- FAIL: TestStep2_Doubles (0.25s)")
	add("TestStep2_Doubles", "fail", "")
	return grade.Parse(strings.NewReader(strings.Join(ev, "\n")))
}

// reportOf is the screen's report of the parsed run res, as gradeCmd
// builds it.
func reportOf(res *grade.Result) report {
	lab := demoLab()
	rep := &grade.Report{Lab: lab.ID, Status: grade.LabFailed, Result: res}
	for _, s := range lab.Steps {
		st := grade.Step{Test: s.Test, Title: s.Title, Status: grade.NotRun}
		if t := res.Test(s.Test); t != nil {
			st.Status, st.Failure, st.Elapsed = t.Status, t.Failure, t.Elapsed
		}
		rep.Steps = append(rep.Steps, st)
	}
	r := toReport(lab, rep, nil)
	return r
}

// TestAnyStepOpens: after a grade the cursor is on the first failing step;
// up moves it to a passing step, enter opens that step's log lines and
// time, esc goes back to the list (and is the screen's while a step is
// open), and the failing step shows all its lines and its hints.
func TestAnyStepOpens(t *testing.T) {
	m := newTest(t, fixtureRoot, 80, 24)
	m, _ = press(t, m, "enter")
	m, _ = deliver(t, m, reportOf(testRun()))
	v := view(m)
	if !strings.Contains(v, "› ✗ 2. Double a number") || !strings.Contains(v, "  ✓ 1. Add two numbers") {
		t.Fatalf("the cursor is not on the failing step:\n%s", v)
	}
	if m.Capturing() {
		t.Fatal("the list of steps holds esc: the learner could not go back")
	}

	m, _ = press(t, m, "k")
	if v = view(m); !strings.Contains(v, "› ✓ 1. Add two numbers") {
		t.Fatalf("k did not move the cursor up:\n%s", v)
	}
	m, cmd := press(t, m, "enter")
	if cmd != nil || m.grading {
		t.Fatal("enter on a step graded instead of opening it")
	}
	v = view(m)
	for _, want := range []string{"Step 1 of 2", "1. Add two numbers", "passed in 0.25s · TestStep1_Adds",
		"Output · 2 lines", "demo_test.go:8: Add(2, 3) = 5", "demo_test.go:9: Add(-1, 1) = 0"} {
		if !strings.Contains(v, want) {
			t.Errorf("open passing step lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "Hints") || strings.Contains(v, "=== RUN") || strings.Contains(v, "--- PASS") {
		t.Errorf("a passing step shows hints or go test's framing:\n%s", v)
	}
	if !m.Capturing() {
		t.Fatal("an open step does not hold esc: esc would leave the lab")
	}
	if got := shortKeys(m); got != "g esc → h w tab" && got != "g esc → w tab" {
		t.Errorf("short help with a step open: %q", got)
	}

	// → shows the next step: all 20 lines of the failure, and its hints.
	m, _ = press(t, m, "]")
	m.SetSize(80, 40)
	v = view(m)
	for _, want := range []string{"Step 2 of 2", "failed in 0.25s · TestStep2_Doubles", "Output · 20 lines",
		"Double(1) = 1, want 2", "Double(20) = 20, want 40"} {
		if !strings.Contains(v, want) {
			t.Errorf("open failing step lacks %q:\n%s", want, v)
		}
	}
	m, _ = press(t, m, "h")
	if v = view(m); !strings.Contains(v, "Twice a number is the number added to itself.") {
		t.Errorf("h in a failing step does not open its hint:\n%s", v)
	}

	m, _ = press(t, m, "esc")
	v = view(m)
	if m.Capturing() || !strings.Contains(v, "Steps · 1 of 2 passed") || !strings.Contains(v, "› ✗ 2. Double a number") {
		t.Fatalf("esc did not go back to the steps (capturing=%v):\n%s", m.Capturing(), v)
	}
	// The list cuts a long failure, and says where to read all of it.
	m.SetSize(80, 24)
	if v = view(m); !strings.Contains(v, "more lines: enter opens step 2 with all of them") {
		t.Errorf("the cut failure does not point to the step:\n%s", v)
	}
}

// TestOpenStepFollowsRegrades: a step left open shows the new outcome
// when the lab is graded again (as watch mode does on a save), and g
// grades from inside it.
func TestOpenStepFollowsRegrades(t *testing.T) {
	m := newTest(t, fixtureRoot, 80, 24)
	m, _ = press(t, m, "enter")
	m, _ = deliver(t, m, reportOf(testRun()))
	m, _ = press(t, m, "enter") // step 2, the failing one
	if !strings.Contains(view(m), "failed in") {
		t.Fatalf("step 2 not open:\n%s", view(m))
	}
	m, cmd := press(t, m, "g")
	if cmd == nil || !m.grading {
		t.Fatal("g in an open step did not grade")
	}
	m, _ = deliver(t, m, passingReport())
	v := view(m)
	if !strings.Contains(v, "Step 2 of 2") || !strings.Contains(v, "passed a first run, not yet under the race detector") || !strings.Contains(v, "(the test printed nothing)") {
		t.Fatalf("the open step did not follow the new grade:\n%s", v)
	}
	if _, cmd = press(t, m, "h"); !strings.Contains(m.notice, "This step passes") {
		t.Fatalf("h on a passing step: notice %q", m.notice)
	}
}

// TestStepsBeforeAGrade: enter still grades before there is anything to
// open, and a step that did not run says why.
func TestStepsBeforeAGrade(t *testing.T) {
	m := newTest(t, fixtureRoot, 80, 24)
	m, _ = press(t, m, "tab")
	if strings.Contains(view(m), "›") {
		t.Fatalf("a cursor before any grade:\n%s", view(m))
	}
	m, cmd := press(t, m, "enter")
	if cmd == nil || !m.grading {
		t.Fatal("enter before any grade did not grade")
	}
	r := failingReport()
	r.Steps[0].Status, r.Steps[1].Status, r.Steps[1].Failure = grade.NotRun, grade.NotRun, nil
	r.BuildErrors = []string{"labs/00_demo/demo.go:9:9: undefined: nn"}
	m, _ = deliver(t, m, r)
	m, _ = press(t, m, "enter")
	if v := view(m); !strings.Contains(v, "did not run · TestStep1_Adds") || !strings.Contains(v, "does not compile") {
		t.Fatalf("a step that did not run does not say why:\n%s", v)
	}
}

func shortKeys(m *Model) string {
	var ks []string
	for _, b := range m.ShortHelp() {
		if b.Enabled() {
			ks = append(ks, b.Help().Key)
		}
	}
	return strings.Join(ks, " ")
}

// TestOpenStepFitsTheScreen: an open step with a long output keeps to the
// screen's size, down to a small terminal.
func TestOpenStepFitsTheScreen(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}, {60, 15}, {30, 8}} {
		w, h := size[0], size[1]
		m := newTest(t, fixtureRoot, w, h)
		m, _ = press(t, m, "enter")
		m, _ = deliver(t, m, reportOf(testRun()))
		m, _ = press(t, m, "enter", "h")
		checkFits(t, m, w, h, "open step")
	}
}

func checkFits(t *testing.T, m *Model, w, h int, what string) {
	t.Helper()
	lines := strings.Split(view(m), "\n")
	if len(lines) != h {
		t.Errorf("%dx%d %s: %d lines", w, h, what, len(lines))
	}
	for i, l := range lines {
		if lw := ansi.StringWidth(l); lw > w {
			t.Errorf("%dx%d %s: line %d is %d wide: %q", w, h, what, i, lw, l)
		}
	}
}

// TestShortHelpFitsEightyColumns: in every state the one-line help, with
// the root's "esc back" (unless the screen holds esc) and "? help" after it, fits the 78 columns the
// root gives it at 80.
func TestShortHelpFitsEightyColumns(t *testing.T) {
	width := func(m *Model) (int, string) {
		var parts []string
		for _, b := range m.ShortHelp() {
			if b.Enabled() {
				parts = append(parts, b.Help().Key+" "+b.Help().Desc)
			}
		}
		if !m.Capturing() {
			parts = append(parts, "esc back") // the root's, when esc is not the screen's
		}
		parts = append(parts, "? help")
		s := strings.Join(parts, " • ")
		return ansi.StringWidth(s), s
	}
	check := func(m *Model, state string) {
		t.Helper()
		if w, s := width(m); w > 78 {
			t.Errorf("%s: help is %d wide: %q", state, w, s)
		}
	}
	m := newTest(t, fixtureRoot, 80, 24)
	check(m, "fresh")
	m, _ = press(t, m, "enter")
	check(m, "grading")
	m, _ = deliver(t, m, reportOf(testRun()))
	check(m, "graded")
	m, _ = press(t, m, "enter")
	check(m, "step open")
	m, _ = press(t, m, "esc", "s")
	check(m, "question")
	m, cmd := press(t, m, "y")
	m = runCmd(t, m, cmd)
	check(m, "solution")

	// The full help's columns fit 78 columns too: bubbles aligns each
	// column's keys, then a space, then their descriptions, and puts four
	// spaces between columns.
	total := 0
	for i, col := range m.FullHelp() {
		keyW, descW := 0, 0
		for _, b := range col {
			keyW = max(keyW, ansi.StringWidth(b.Help().Key))
			descW = max(descW, ansi.StringWidth(b.Help().Desc))
		}
		if i > 0 {
			total += 4
		}
		total += keyW + 1 + descW
	}
	if total > 78 {
		t.Errorf("full help is %d wide", total)
	}
}

// TestListShowsTheCursorsFailure: with two steps failing, the failure and
// the hint line under the list are the cursor's step's, which h gives
// hints for, in the list; they said "Step 1 failed · Stuck on step 1?
// Press h" under a cursor on step 2, and h then opened step 2's hints.
func TestListShowsTheCursorsFailure(t *testing.T) {
	var ev []string
	for _, tc := range []struct{ test, msg string }{{"TestStep1_Adds", "Add(2, 3) = 4, want 5"}, {"TestStep2_Doubles", "Double(3) = 3, want 6"}} {
		ev = append(ev, fmt.Sprintf(`{"Action":"run","Test":%q}`, tc.test),
			fmt.Sprintf(`{"Action":"output","Test":%q,"Output":%q}`, tc.test, "    demo_test.go:8: "+tc.msg+"\n"),
			fmt.Sprintf(`{"Action":"fail","Test":%q,"Elapsed":0.1}`, tc.test))
	}
	m := newTest(t, fixtureRoot, 80, 24)
	m, _ = press(t, m, "enter")
	m, _ = deliver(t, m, reportOf(grade.Parse(strings.NewReader(strings.Join(ev, "\n")))))
	if v := view(m); !strings.Contains(v, "Step 1 failed") || !strings.Contains(v, "Add(2, 3) = 4") || !strings.Contains(v, "Stuck on step 1?") {
		t.Fatalf("the cursor on step 1: its failure and hint line:\n%s", v)
	}
	m, _ = press(t, m, "j")
	v := view(m)
	if !strings.Contains(v, "Step 2 failed") || !strings.Contains(v, "Double(3) = 3") || !strings.Contains(v, "Stuck on step 2? Press h for a hint (2 available)") ||
		strings.Contains(v, "Step 1 failed") || strings.Contains(v, "Stuck on step 1") {
		t.Fatalf("the cursor on step 2: the list should show step 2's failure and hint line:\n%s", v)
	}
	m, _ = press(t, m, "h")
	if v = view(m); !strings.Contains(v, "Steps · 0 of 2 passed") || !strings.Contains(v, "Hints for step 2 · 1 of 2") || !strings.Contains(v, "Twice a number") {
		t.Fatalf("h on step 2 should show its hint under the list:\n%s", v)
	}
}
