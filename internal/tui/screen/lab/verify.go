package lab

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"charm.land/bubbles/v2/key"

	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/internal/tui/text"
)

// verifyUI is what the screen knows of the verification of a pass: when
// it started, whether it is the lab's first (it compiles the race build
// then), and whether its report (the race detector's, or the failing
// run's output) is open in the results pane.
type verifyUI struct {
	from  time.Time
	first bool
	open  bool
}

// reportOpen reports whether the verification's report is what the
// results pane shows.
func (m Model) reportOpen() bool {
	return m.verify.open && m.pane == paneResults && m.report.unsound()
}

// startVerify notes the start of a verification and keeps the spinner
// going while it runs.
func (m *Model) startVerify() tea.Cmd {
	m.verify = verifyUI{from: m.now(), first: !grade.RaceBuildKept(m.gradeOptions())}
	if m.spinning {
		return nil
	}
	m.spinning = true
	return m.spinner.Tick
}

// verifyKeys handles v (open or close the verification's report) and esc
// while it is open. It reports whether the key was one of them.
func (m *Model) verifyKeys(msg tea.KeyPressMsg) bool {
	k := m.keys
	switch {
	case key.Matches(msg, k.Report) && m.report.unsound():
		m.verify.open = !m.verify.open
		m.pane = paneResults
	case m.reportOpen() && key.Matches(msg, k.CloseStep):
		m.verify.open = false
	default:
		return false
	}
	m.layout()
	m.resultsVP.GotoTop()
	return true
}

// verifyingText is the results pane's line while a pass is verified.
func (m Model) verifyingText(w int) string {
	st := m.Styles
	s := st.Text.Render("No step failed in a first run.") + " " +
		st.Text.Render(fmt.Sprintf("A pass needs %d more runs under the race detector: running them…", grade.VerifyCount))
	if !m.verify.from.IsZero() {
		s += st.Muted.Render(" " + text.Elapsed(m.now().Sub(m.verify.from)))
	}
	out := text.Wrap(s, w)
	if m.verify.first {
		out += "\n\n" + text.Wrap(st.Muted.Render("Why this one is slower: "+grade.FirstVerifyNote+"."), w)
	}
	return out
}

// reportText is the verification's report: the race detector's, with the
// learner's frames first, or else the output of the first step that
// failed a run.
func (m Model) reportText(w int) string {
	st := m.Styles
	v := m.report.Lab.Verify
	var b strings.Builder
	line := func(s string) { b.WriteString(s + "\n") }
	line(st.Muted.Render(text.Truncate("The verification's failing run · v or esc: back to the steps", w)))
	line("")
	line(text.Wrap(st.Error.Render(m.report.Lab.Message), w))
	line("")
	var out []string
	switch {
	case v == nil:
	case len(v.RaceReport) > 0:
		line(st.Heading.Render("The race detector's report") + st.Muted.Render(" · your code first"))
		out = v.RaceReport
	default:
		for _, s := range v.Result.Steps(m.stepTests()) {
			if s.Status == grade.Fail {
				line(st.Heading.Render("What " + grade.StepName(s.Test) + " printed in the failing run"))
				out = s.Failure
				break
			}
		}
	}
	if len(out) == 0 {
		line(st.Muted.Render("  (no output kept)"))
	}
	for _, l := range out {
		l = strings.ReplaceAll(l, "\t", "    ")
		line(text.Indent(text.Wrap(codeLoc(st.Code.Render, strings.TrimSpace(l)), w-2), "  "))
	}
	return b.String()
}

// stepTests are the lab's step test names in manifest order.
func (m Model) stepTests() []string {
	var names []string
	for _, s := range m.lab.Steps {
		names = append(names, s.Test)
	}
	return names
}

// verifyElapsed is how long the verification has run, "" when the screen
// did not start it (watch mode's).
func (m Model) verifyElapsed() string {
	if m.verify.from.IsZero() {
		return ""
	}
	return text.Elapsed(m.now().Sub(m.verify.from))
}
