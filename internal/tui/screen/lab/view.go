package lab

import (
	"fmt"
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/progress"

	"charm.land/bubbles/v2/viewport"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/internal/tui/text"
)

// wideWidth is the width from which README and results sit side by side.
const wideWidth = 110

// Without the labs there is only the how-to and the README, and the clone
// command must not be cut by a half-width pane.
func (m Model) wide() bool { return m.Width >= wideWidth && m.labsPresent }

// slowBuild is when the spinner line starts explaining the wait.
const slowBuild = 3 * time.Second

// headHeight is the lines above the panes: title, subtitle, pane tabs.
// Below them comes the status, one line or two for a long notice.
const headHeight = 3

// maxStatusLines bounds the status at the bottom.
const maxStatusLines = 2

// layout sizes the panes and refreshes their content. It runs after every
// change of state, so View only stitches strings together.
func (m *Model) layout() {
	bodyH := m.Height - headHeight - strings.Count(m.statusLine(), "\n") - 1
	if bodyH < 1 {
		bodyH = 1
	}
	if m.wide() {
		left := (m.Width - 3) / 2
		right := m.Width - 3 - left
		m.readmeVP.SetWidth(left)
		m.resultsVP.SetWidth(right)
		m.solutionVP.SetWidth(right)
	} else {
		m.readmeVP.SetWidth(m.Width)
		m.resultsVP.SetWidth(m.Width)
		m.solutionVP.SetWidth(m.Width)
	}
	for _, vp := range []*viewport.Model{&m.readmeVP, &m.resultsVP, &m.solutionVP} {
		vp.SetHeight(bodyH)
	}
	m.readmeVP.SetContent(m.readmeText())
	m.resultsVP.SetContent(m.resultsText(m.resultsVP.Width()))
	m.solutionVP.SetContent(m.solutionText(m.solutionVP.Width()))
}

// View draws the screen in exactly the area given by SetSize.
func (m Model) View() string {
	st := m.Styles
	title := m.labName() + " · " + m.lab.Title
	badges := m.badges()
	gap := m.Width - lipgloss.Width(title) - lipgloss.Width(badges)
	if gap < 1 {
		title = ansi.Truncate(title, max(m.Width-lipgloss.Width(badges)-1, 0), "…")
		gap = max(m.Width-lipgloss.Width(title)-lipgloss.Width(badges), 0)
	}
	head := st.Title.Render(title) + strings.Repeat(" ", gap) + badges
	if !m.opened {
		return head + "\n" + st.Muted.Render("Opening the lab…")
	}
	lines := []string{head, st.Subtitle.Render(m.subtitle()), ansi.Truncate(m.tabs(), m.Width, "")}
	if m.faults.IsOpen() {
		lines[2] = st.Selected.Render(" Under faults ") + st.Muted.Render("  esc back to the lab")
		f := m.faults
		f.SetSize(m.Width, m.readmeVP.Height())
		f.SetSpinner(m.spinner.View())
		lines = append(lines, f.View())
	} else if m.wide() {
		right := &m.resultsVP
		if m.pane == paneSolution {
			right = &m.solutionVP
		}
		sep := strings.TrimRight(strings.Repeat(st.Muted.Render(" │ ")+"\n", m.readmeVP.Height()), "\n")
		lines = append(lines, lipgloss.JoinHorizontal(lipgloss.Top,
			text.Box(m.readmeVP.View(), m.readmeVP.Width(), m.readmeVP.Height()),
			sep,
			text.Box(right.View(), right.Width(), right.Height())))
	} else {
		vp := m.activeVP()
		lines = append(lines, text.Box(vp.View(), vp.Width(), vp.Height()))
	}
	lines = append(lines, m.statusLine())
	return strings.Join(lines, "\n")
}

func (m Model) badges() string {
	st := m.Styles
	var b []string
	if m.watching {
		b = append(b, st.Badge.Render("● watching"))
	} else if other := m.watch.Lab(); other != "" {
		b = append(b, st.Muted.Render("watching "+other))
	}
	// "Passed" is about the grade on screen: a lab passed before but
	// failing now says both.
	switch {
	case m.report.verified():
		b = append(b, st.Success.Render("✓ passed"))
	case m.passed && (m.report == nil || m.report.allPassed() || m.grading):
		b = append(b, st.Success.Render("✓ passed before"))
	case m.passed:
		b = append(b, st.Warning.Render("passed before · fails now"))
	}
	return strings.Join(b, " ")
}

func (m Model) tabs() string {
	st := m.Styles
	tab := func(p pane, name string) string {
		if p == m.pane {
			return st.Selected.Render(" " + name + " ")
		}
		return st.Muted.Render(" " + name + " ")
	}
	results := "Results"
	if !m.labsPresent {
		results = "Get the labs"
	}
	if m.wide() {
		left := tab(paneReadme, "README")
		right := tab(paneResults, results)
		if m.solution != "" {
			right += tab(paneSolution, "Solution")
		}
		pad := max(m.readmeVP.Width()+3-lipgloss.Width(left), 1)
		return left + strings.Repeat(" ", pad) + right
	}
	s := tab(paneReadme, "README") + tab(paneResults, results)
	if m.solution != "" {
		s += tab(paneSolution, "Solution")
	}
	return s + st.Muted.Render("  tab switches")
}

// statusLine is the bottom line: a question, the grading spinner, or news.
func (m Model) statusLine() string {
	st := m.Styles
	var s string
	switch {
	case m.faults.IsOpen():
		s = st.Muted.Render(ansi.Truncate("Your code runs in child processes, never inside the playground.", m.Width, "…"))
	case m.confirm == confirmSolution:
		s = st.Warning.Render("Not passed yet. Show the reference solution anyway? (y/n)")
	case m.confirm == confirmReset:
		s = st.Warning.Render("Reset " + m.lab.File + " to the original? Your code is kept aside. (y/n)")
	case m.grading:
		d := m.now().Sub(m.gradeFrom)
		s = m.spinner.View() + " " + st.Text.Render("Grading… "+text.Elapsed(d)) + st.Muted.Render(" · x cancels")
		if d >= slowBuild {
			s += st.Muted.Render(" · a lab's first build can take a minute")
		}
	case m.notice != "":
		if m.noticeErr {
			s = st.Error.Render(m.notice)
		} else {
			s = st.Warning.Render(m.notice)
		}
	case !m.labsPresent:
		s = st.Muted.Render("Reading only: the labs need a checkout of the course.")
	case m.report == nil && m.watching:
		s = st.Muted.Render("Watching labs/" + m.lab.ID + ": every save re-grades.")
	case m.report == nil && m.last != nil:
		s = st.Muted.Render(lastGrade(*m.last) + " · enter grades it again")
	case m.report == nil:
		s = st.Muted.Render("Not graded yet · enter runs the tests")
	default:
		// The clock time shows that a save in watch mode did re-grade,
		// even when the outcome did not change.
		at := m.gradedAt.Format("15:04:05")
		switch {
		case m.report.verified():
			s = st.Success.Render("Passed and verified") + st.Muted.Render(fmt.Sprintf(" (%d runs under -race) · graded at %s", grade.VerifyCount, at))
		case m.report.unsound():
			label := "Racy"
			if m.report.Lab.Status == grade.LabFlaky {
				label = "Flaky"
			}
			s = st.Error.Render(label+": not passed") + st.Muted.Render(" · "+m.report.Lab.Message)
		case m.report.verifying():
			s = m.spinner.View() + " " + st.Text.Render("First run clean") + st.Muted.Render(fmt.Sprintf(" · verifying: %d more runs under the race detector… %s (graded at %s in %s)", grade.VerifyCount, m.verifyElapsed(), at, text.Elapsed(m.report.Elapsed)))
			if m.verify.first {
				s += st.Muted.Render(" · the first one compiles the race build")
			}
		case m.report.allPassed():
			// The runs under the race detector did not end: no pass.
			s = st.Warning.Render("Not verified") + st.Muted.Render(" · "+m.report.Lab.Message+" · graded at "+at)
		case m.report.Err != nil:
			s = st.Muted.Render("Grading failed at " + at)
		default:
			s = st.Muted.Render(fmt.Sprintf("Graded at %s: %d of %d steps passed in %s", at, m.report.passedCount(), len(m.report.Steps), text.Elapsed(m.report.Elapsed)))
		}
		if m.watching {
			s += st.Muted.Render(" · watching saves")
		}
	}
	lines := strings.Split(ansi.Wrap(s, m.Width, ""), "\n")
	if len(lines) > maxStatusLines {
		lines = lines[:maxStatusLines]
		lines[maxStatusLines-1] = ansi.Truncate(lines[maxStatusLines-1], m.Width-1, "") + "…"
	}
	return strings.Join(lines, "\n")
}

func (m *Model) activeVP() *viewport.Model {
	switch m.pane {
	case paneReadme:
		return &m.readmeVP
	case paneSolution:
		return &m.solutionVP
	}
	return &m.resultsVP
}

// lastGrade says how the saved latest grade ended, for a screen that has
// not graded yet.
func lastGrade(g progress.LabGrade) string {
	at := g.At.Local().Format("Jan 2 15:04")
	switch g.Status {
	case progress.LabStatusPassed:
		return "Last graded " + at + ": passed and verified"
	case "":
		return "Not graded yet"
	}
	s := "Last graded " + at + ": " + string(g.Status)
	if g.Step != "" {
		s += " at " + g.Step
	}
	return s
}
