package lab

import (
	"fmt"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/ownership-election/playground/internal/grade"
)

// The golden files are the stripped screen at the two reference sizes;
// refresh them with go test ./internal/tui/labrun/ -run Golden -update.
func TestGoldenScreens(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		w, h := size[0], size[1]
		t.Run(fmt.Sprintf("fresh_%dx%d", w, h), func(t *testing.T) {
			golden.RequireEqual(t, view(newTest(t, fixtureRoot, w, h)))
		})
		t.Run(fmt.Sprintf("failing_hint_%dx%d", w, h), func(t *testing.T) {
			m := newTest(t, fixtureRoot, w, h)
			m, _ = press(t, m, "enter")
			m, _ = deliver(t, m, failingReport())
			m, _ = press(t, m, "h")
			golden.RequireEqual(t, view(m))
		})
		t.Run(fmt.Sprintf("grading_%dx%d", w, h), func(t *testing.T) {
			m := newTest(t, fixtureRoot, w, h)
			m, _ = press(t, m, "enter")
			golden.RequireEqual(t, view(m))
		})
		t.Run(fmt.Sprintf("passed_solution_%dx%d", w, h), func(t *testing.T) {
			m := newTest(t, fixtureRoot, w, h)
			m, _ = press(t, m, "enter")
			m, _ = deliver(t, m, passingReport())
			m, _ = verified(t, m, grade.LabPassed, "")
			m, cmd := press(t, m, "s")
			m = runCmd(t, m, cmd)
			golden.RequireEqual(t, view(m))
		})
		t.Run(fmt.Sprintf("passing_step_open_%dx%d", w, h), func(t *testing.T) {
			m := newTest(t, fixtureRoot, w, h)
			m, _ = press(t, m, "enter")
			m, _ = deliver(t, m, reportOf(testRun()))
			m, _ = press(t, m, "k", "enter")
			golden.RequireEqual(t, view(m))
		})
		t.Run(fmt.Sprintf("no_labs_%dx%d", w, h), func(t *testing.T) {
			golden.RequireEqual(t, view(newTest(t, "", w, h))) // not run from a checkout
		})
	}
}
