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
	for _, want := range []string{"verifying: 5 more runs under the race detector… 17s", "Verifying it holds", "Why this one is slower", "compiles the lab with the race detector"} {
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
