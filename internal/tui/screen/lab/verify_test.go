package lab

import (
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/spinner"

	"github.com/ownership-election/playground/internal/grade"
)

// The first verification says what it is doing, for how long, and why it
// is slower than the ones after it.
func TestVerifyShowsElapsedAndWhyTheFirstIsSlower(t *testing.T) {
	t.Setenv(grade.CacheDirEnv, t.TempDir()) // no race build kept
	now := fixedNow
	m := New(testContext(), Options{Lab: demoLab(), Root: fixtureRoot, Now: func() time.Time { return now }})
	m = runCmd(t, m, m.Init())
	m.SetSize(100, 30)
	m, _ = press(t, m, "g")
	m, cmd := deliver(t, m, passingReport())
	if cmd == nil {
		t.Fatal("a passing grade started no verification")
	}
	now = now.Add(17 * time.Second)
	m.Update(spinner.TickMsg{}) // the spinner's tick redraws
	v := view(m)
	for _, want := range []string{"verifying: 5 more runs under the race detector… 17s", "A pass needs 5 more runs under the race detector", "Why this one is slower", "compiles the lab with the race detector"} {
		if !strings.Contains(strings.Join(strings.Fields(v), " "), want) {
			t.Errorf("the screen while verifying lacks %q:\n%s", want, v)
		}
	}
}

// A racy verification's whole race report is one key away, learner frames
// first, and esc goes back to the steps.
func TestRaceReportIsOneKeyAway(t *testing.T) {
	m := newTest(t, fixtureRoot, 100, 40)
	m, _ = press(t, m, "enter")
	m, _ = deliver(t, m, passingReport())
	report := []string{"WARNING: DATA RACE", "", "Read by goroutine 8:", "  demo.(*Store).Get()   (your code)", "      /x/labs/00_demo/demo.go:40"}
	m.Update(verifyDoneMsg{seq: m.seq, lab: &grade.Report{Status: grade.LabRacy, Message: "failed 1 of 5 runs under -race: a data race",
		Verify: &grade.Verification{Race: true, RaceReport: report}}})
	var help []string
	for _, b := range m.ShortHelp() {
		help = append(help, b.Help().Key+" "+b.Help().Desc)
	}
	if !strings.Contains(strings.Join(help, ", "), "v race report") {
		t.Errorf("the help of a racy lab = %q, want v for the race report", help)
	}
	if v := view(m); strings.Contains(v, "demo.go:40") {
		t.Fatalf("the race report shows before v:\n%s", v)
	}
	m, _ = press(t, m, "v")
	v := view(m)
	for _, want := range []string{"The race detector's report", "Read by goroutine 8:", "(*Store).Get()   (your code)", "demo.go:40"} {
		if !strings.Contains(v, want) {
			t.Errorf("after v the screen lacks %q:\n%s", want, v)
		}
	}
	if !m.Capturing() {
		t.Error("with the report open the screen does not keep esc for itself")
	}
	m, _ = press(t, m, "esc")
	if v := view(m); strings.Contains(v, "Read by goroutine 8:") || !strings.Contains(v, "Steps") {
		t.Errorf("esc did not go back to the steps:\n%s", v)
	}
}

// No pass is shown before the runs under the race detector have confirmed
// it: not while they run, not for the step they fail, and not when they
// are stopped before they end.
func TestNoPassShownBeforeTheRaceCheckedRuns(t *testing.T) {
	m := newTest(t, fixtureRoot, 100, 40)
	m, _ = press(t, m, "enter")
	m, _ = deliver(t, m, passingReport())
	v := view(m)
	for _, bad := range []string{"✓", "Every step passes", "all 2 passed", "Passed"} {
		if strings.Contains(v, bad) {
			t.Errorf("while the race-checked runs go on, the screen shows %q:\n%s", bad, v)
		}
	}
	if !strings.Contains(v, "○ 1. Add two numbers") || !strings.Contains(v, "A pass needs 5 more runs") {
		t.Errorf("while verifying, the steps are not shown as waiting for the race detector:\n%s", v)
	}

	// The verification fails step 2 under -race: step 2 is a failure,
	// step 1 (which passed every run) a pass.
	lab := *m.report.Lab
	lab.Steps = []grade.Step{
		{Test: "TestStep1_Adds", Title: "Add two numbers", Status: grade.Pass},
		{Test: "TestStep2_Doubles", Title: "Double a number", Status: grade.Fail, Failure: []string{"race detected during execution of test"}},
	}
	lab.Status, lab.Message = grade.LabRacy, "failed 1 of 5 runs under -race: a data race in step 2"
	lab.Verify = &grade.Verification{Race: true}
	m.Update(verifyDoneMsg{seq: m.seq, lab: &lab})
	v = view(m)
	if !strings.Contains(v, "✓ 1. Add two numbers") || !strings.Contains(v, "✗ 2. Double a number") || strings.Contains(v, "all 2 passed") {
		t.Errorf("after the race detector failed step 2:\n%s", v)
	}

	// A pass whose verification is dropped (a new grade, cancelled) is
	// not shown as a pass, nor as still being verified.
	m, _ = press(t, m, "g")
	m, _ = deliver(t, m, passingReport())
	m, _ = press(t, m, "g")
	m, _ = press(t, m, "x")
	v = view(m)
	for _, bad := range []string{"✓", "Every step passes", "running them"} {
		if strings.Contains(v, bad) {
			t.Errorf("after the verification was dropped the screen shows %q:\n%s", bad, v)
		}
	}
	if !strings.Contains(v, "did not end") {
		t.Errorf("after the verification was dropped the screen does not say the pass is unconfirmed:\n%s", v)
	}
}
