package lab

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"charm.land/bubbles/v2/key"

	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/internal/tui/text"
)

// stepsUI is the cursor over the results pane's steps, and whether the
// step under it is open: its whole output in place of the list.
type stepsUI struct {
	cursor int
	open   bool
}

// stepOpen reports whether a step's output is what the results pane shows.
func (m Model) stepOpen() bool {
	return m.steps.open && m.pane == paneResults && m.labsPresent
}

// stepKeys handles the keys of the results pane's steps: up and down move
// the cursor (and scroll on past the list's ends), enter opens the step
// under it once there is a grade to show, esc closes it, left and right
// step through the steps while one is open. It reports whether the key
// was one of them.
func (m *Model) stepKeys(msg tea.KeyPressMsg) bool {
	if m.pane != paneResults || !m.labsPresent || len(m.stepsView()) == 0 {
		return false
	}
	k := m.keys
	n := len(m.stepsView())
	if m.steps.open {
		switch {
		case key.Matches(msg, k.CloseStep), key.Matches(msg, k.OpenStep):
			m.steps.open = false
			m.layout()
			m.showCursor()
		case key.Matches(msg, k.PrevStep):
			m.openStep((m.steps.cursor + n - 1) % n)
		case key.Matches(msg, k.NextStep):
			m.openStep((m.steps.cursor + 1) % n)
		default:
			return false // scrolling, grading, hints: as everywhere
		}
		return true
	}
	switch {
	case key.Matches(msg, k.Up):
		if m.steps.cursor == 0 || !m.cursorVisible() {
			return false // scroll up to the top instead
		}
		m.steps.cursor--
	case key.Matches(msg, k.Down):
		if m.steps.cursor >= n-1 || !m.cursorVisible() {
			return false // on past the list: the failure and hints below
		}
		m.steps.cursor++
	case key.Matches(msg, k.OpenStep) && m.report != nil:
		m.openStep(m.steps.cursor)
		return true
	default:
		return false
	}
	m.layout()
	m.showCursor()
	return true
}

func (m *Model) openStep(i int) {
	m.steps.cursor, m.steps.open = i, true
	m.notice = ""
	m.layout()
	m.resultsVP.GotoTop()
}

// afterGrade puts the cursor on the first step that failed (or did not
// run), which is the one to open, unless a step is open: then the learner
// keeps reading that step, now with the new outcome.
func (m *Model) afterGrade() {
	if m.steps.open {
		return
	}
	if i := m.report.firstFailing(); i >= 0 {
		m.steps.cursor = i
	}
}

// stepLine is the line of the results text where step i's row starts.
func (m Model) stepLine(i int) int {
	w := m.resultsVP.Width()
	line := 1 // the "Steps" heading
	for j, s := range m.stepsView()[:min(i, len(m.stepsView()))] {
		line += strings.Count(m.stepRow(j, s, w), "\n") + 1
	}
	return line
}

// cursorVisible reports whether the cursor's row is on screen, so that
// up and down move it; once the learner scrolled past the list, they
// scroll.
func (m Model) cursorVisible() bool {
	l := m.stepLine(m.steps.cursor)
	return l >= m.resultsVP.YOffset() && l < m.resultsVP.YOffset()+m.resultsVP.Height()
}

// showCursor scrolls the results pane so that the cursor's row is in view.
func (m *Model) showCursor() {
	l := m.stepLine(m.steps.cursor)
	switch vp := &m.resultsVP; {
	case l == 1:
		vp.GotoTop() // the heading too
	case l < vp.YOffset():
		vp.SetYOffset(l)
	case l >= vp.YOffset()+vp.Height():
		vp.SetYOffset(l - vp.Height() + 1)
	}
}

// stepRow is one line of the steps list (more when its title wraps): a
// cursor mark when the results pane has the focus and there is a grade
// to open, the step's outcome and its title.
func (m Model) stepRow(i int, s stepResult, w int) string {
	st := m.Styles
	mark, style := "·", st.Muted
	switch s.Status {
	case grade.Pass:
		mark, style = "✓", st.Success
		if !m.report.passConfirmed(i) {
			mark, style = "○", st.Muted // passed a first run only
		}
	case grade.Fail:
		mark, style = "✗", st.Error
	case grade.Skip:
		mark, style = "-", st.Warning
	}
	label := fmt.Sprintf("%d. %s", i+1, s.Title)
	if s.Status == grade.NotRun && m.report != nil {
		label += " (not run)"
	}
	gutter := "  "
	selected := m.report != nil && i == m.steps.cursor && m.pane == paneResults
	if selected {
		gutter = st.Cursor.Render("› ")
		label = st.Selected.Render(label)
	}
	return gutter + text.Hang(style.Render(mark)+" ", label, w-2)
}

// stepText is the open step: how it ended and in how long, everything its
// test printed (as kept by internal/grade: the first and last lines of a
// long output), and for a step that did not pass, its hints.
func (m Model) stepText(w int) string {
	st := m.Styles
	steps := m.stepsView()
	i := min(m.steps.cursor, len(steps)-1)
	s := steps[i]
	var b strings.Builder
	line := func(s string) { b.WriteString(s + "\n") }

	line(st.Muted.Render(text.Truncate(fmt.Sprintf("Step %d of %d · esc: all steps · ←/→: other steps", i+1, len(steps)), w)))
	line("")
	outcome, mark, style := "did not run", "·", st.Heading
	switch s.Status {
	case grade.Pass:
		outcome, mark, style = "passed", "✓", st.Success
		if !m.report.passConfirmed(i) {
			outcome, mark, style = "passed a first run, not yet under the race detector", "○", st.Heading
		}
	case grade.Fail:
		outcome, mark, style = "failed", "✗", st.Error
	case grade.Skip:
		outcome, mark, style = "skipped", "-", st.Warning
	}
	line(text.Hang(style.Render(mark)+" ", style.Render(fmt.Sprintf("%d. %s", i+1, s.Title)), w))
	meta := outcome
	if s.Status != grade.NotRun {
		meta += " in " + stepElapsed(s.Elapsed.Seconds())
	}
	line(st.Muted.Render(text.Wrap(meta+" · "+s.Test, w)))
	line("")

	switch {
	case m.report == nil:
		line(text.Wrap(st.Text.Render("Not graded yet: press g to run the tests."), w))
		return b.String()
	case s.Status == grade.NotRun:
		line(text.Wrap(st.Text.Render(m.notRunReason()), w))
		line("")
	default:
		out := m.stepOutput(s)
		line(st.Heading.Render("Output") + st.Muted.Render(fmt.Sprintf(" · %d line%s", len(out), plural(len(out)))))
		if len(out) == 0 {
			line(st.Muted.Render("  (the test printed nothing)"))
		}
		for _, l := range out {
			l = strings.ReplaceAll(l, "\t", "    ")
			line(text.Hang("  ", codeLoc(st.Code.Render, strings.TrimSpace(l)), w))
		}
		line("")
	}
	if s.Status != grade.Pass {
		m.hintsText(&b, i, s, w)
	}
	return b.String()
}

// stepOutput is what step s's test printed: its failure for a failing
// step (what the first failing run said), else its output in the run.
func (m Model) stepOutput(s stepResult) []string {
	if s.Status == grade.Fail && len(s.Failure) > 0 {
		return s.Failure
	}
	if r := m.report; r != nil && r.Lab != nil && r.Lab.Result != nil {
		if t := r.Lab.Result.Test(s.Test); t != nil {
			return t.Output
		}
	}
	return s.Failure
}

// notRunReason says why a step has no outcome in the last grade.
func (m Model) notRunReason() string {
	r := m.report
	switch {
	case r.Err != nil:
		return "The grade could not run: " + r.Err.Error()
	case len(r.BuildErrors) > 0:
		return "The package does not compile, so no test ran: esc shows the compiler's messages."
	case r.TimedOut:
		return "The run timed out before this step's test started or finished: an earlier step may hang."
	case r.Message != "":
		return "The run broke off before this step's test: " + r.Message
	}
	return "This step's test did not run."
}

// stepElapsed formats a test's time the way go test does (0.00s).
func stepElapsed(s float64) string { return fmt.Sprintf("%.2fs", s) }

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// hintStep is the step whose hints h opens: the step under the cursor
// (open, or picked in the list) when it did not pass, else the first
// failing one; -1 when the cursor's step passed or none failed. It was
// the first failing step whatever the cursor was on.
func (m Model) hintStep() int {
	if m.report == nil {
		return -1
	}
	if i := m.steps.cursor; (m.stepOpen() || m.pane == paneResults) && i < len(m.report.Steps) {
		switch m.report.Steps[i].Status {
		case grade.Pass:
			return -1
		case grade.Fail:
			return i
		}
	}
	return m.report.firstFailing()
}
