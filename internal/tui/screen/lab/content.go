package lab

import (
	"fmt"
	"strings"

	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/internal/tui/text"
)

// maxFailureLines keeps a long failure (a panic's stack trace) from pushing
// the hints off the screen.
const maxFailureLines = 12

// readmeText is the rendered README for the pane's width, or the Markdown
// source wrapped to it while glamour is still working.
func (m Model) readmeText() string {
	if out, ok := m.readmeRendered[m.readmeWidth()]; ok {
		return out
	}
	return text.Wrap(strings.TrimSpace(unwrapMarkdown(m.readmeSrc)), m.readmeVP.Width())
}

// resultsText is the grade pane: steps, the first failure, compiler errors,
// hints; or how to get the labs when they are not on this machine.
func (m Model) resultsText(w int) string {
	if !m.labsPresent {
		return m.getLabsText(w)
	}
	if m.reportOpen() {
		return m.reportText(w)
	}
	if m.stepOpen() && len(m.stepsView()) > 0 {
		return m.stepText(w)
	}
	var b strings.Builder
	m.stepList(&b, w)
	if m.outcomeText(&b, w) {
		return b.String()
	}
	m.runProblems(&b, w)
	// The failure under the list is the cursor's step's, when it failed
	// (h gives its hints); else the first failing step's, without a
	// hint line (h on a step that passes gives none). It was always the
	// first's, under a cursor on another: "Stuck on step 1? Press h",
	// and h gave another step's hints.
	i, hints := m.hintStep(), true
	if i < 0 {
		i, hints = m.report.firstFailing(), false
	}
	if i >= 0 {
		s := m.stepsView()[i]
		m.failureText(&b, i, s, w)
		if hints {
			m.hintsText(&b, i, s, w)
		}
	}
	return b.String()
}

// line adds s and a newline to b.
func line(b *strings.Builder, s string) { b.WriteString(s + "\n") }

// stepList is the heading with the count passed, and a row per step.
func (m Model) stepList(b *strings.Builder, w int) {
	st, r := m.Styles, m.report
	switch {
	case r == nil:
		line(b, st.Heading.Render("Steps")+st.Muted.Render(" · not graded yet"))
	case r.verified():
		line(b, st.Heading.Render("Steps")+st.Success.Render(fmt.Sprintf(" · all %d passed", len(r.Steps)))+
			st.Muted.Render(" in "+text.Elapsed(r.Elapsed)))
	case r.allPassed():
		// Not a pass yet: the race detector has not run, or did not end.
		line(b, st.Heading.Render("Steps")+st.Muted.Render(fmt.Sprintf(" · no failure in a first run of %d (○: not yet under -race)", len(r.Steps))))
	default:
		line(b, st.Heading.Render("Steps")+st.Muted.Render(fmt.Sprintf(" · %d of %d passed", r.passedCount(), len(r.Steps))))
	}
	for i, s := range m.stepsView() {
		line(b, m.stepRow(i, s, w))
	}
	line(b, "")
}

// outcomeText says how a grade ended when that is all there is to say
// (not graded, could not grade, racy or flaky, verifying, passed) and
// reports whether it did.
func (m Model) outcomeText(b *strings.Builder, w int) bool {
	st, r := m.Styles, m.report
	switch {
	case r == nil:
		line(b, text.Wrap(st.Text.Render("Write your code in "+m.lab.File+", then press enter to run the tests (the same as go test ./labs/"+m.lab.ID+"/). Press w to re-grade on every save."), w))
	case r.Err != nil:
		line(b, st.Error.Render("Could not grade"))
		line(b, text.Hang("  ", r.Err.Error(), w))
	case r.unsound():
		line(b, st.Error.Render("Every step passed once, but not every time under the race detector"))
		line(b, text.Hang("  ", r.Lab.Message, w))
		if v := r.Lab.Verify; v != nil && v.Race {
			line(b, text.Hang("  ", st.Text.Render("Two goroutines use the same data without a lock or a channel between them; the race detector (go test -race) shows where. A race can pass a hundred runs and fail the next."), w))
		}
		line(b, text.Hang("  ", st.Muted.Render("v opens the failing run's whole report."), w))
	case r.verifying():
		line(b, m.verifyingText(w))
	case r.verified():
		line(b, text.Wrap(st.Success.Render("Every step passes. Well done!")+" "+
			st.Text.Render("Press s to compare with the reference solution."), w))
	case r.allPassed():
		line(b, st.Warning.Render("Not passed yet: no step failed in a first run, but the runs under the race detector did not end"))
		line(b, text.Hang("  ", r.Lab.Message, w))
		line(b, text.Hang("  ", st.Muted.Render("enter grades again."), w))
	default:
		return false
	}
	return true
}

// runProblems are what went wrong with the run as a whole: compiler
// errors, a timeout, a run that broke off.
func (m Model) runProblems(b *strings.Builder, w int) {
	st, r := m.Styles, m.report
	if len(r.BuildErrors) > 0 {
		line(b, st.Error.Render("Does not compile")+st.Muted.Render(" · fix these first"))
		for _, e := range r.BuildErrors {
			line(b, text.Hang("  ", codeLoc(st.Code.Render, e), w))
		}
		line(b, "")
	}
	switch {
	case r.TimedOut:
		line(b, st.Error.Render("Timed out"))
		msg := r.Message
		if msg == "" {
			msg = "The tests did not finish in time: look for an endless loop, a lock that is never released, or a channel nobody reads."
		}
		line(b, text.Hang("  ", msg, w))
		line(b, "")
	case r.Message != "" && len(r.BuildErrors) == 0:
		line(b, st.Error.Render("The test run broke off"))
		line(b, text.Hang("  ", r.Message, w))
		line(b, "")
	}
}

// failureText is the first failing step's message, cut to what leaves
// the hint line on the first screen.
func (m Model) failureText(b *strings.Builder, i int, s stepResult, w int) {
	if s.Status != grade.Fail {
		return
	}
	st := m.Styles
	line(b, st.Error.Render(fmt.Sprintf("Step %d failed", i+1))+st.Muted.Render(" · "+s.Test))
	msg := s.Failure
	if len(msg) == 0 {
		msg = []string{"(the test printed no message)"}
	}
	// What is left of the pane after the steps and the headings, but at
	// least a few lines.
	limit := min(max(m.resultsVP.Height()-len(m.stepsView())-9, 3), maxFailureLines)
	shown := msg[:min(len(msg), limit)]
	for _, l := range shown {
		line(b, text.Hang("  ", codeLoc(st.Code.Render, strings.TrimSpace(l)), w))
	}
	if more := len(msg) - len(shown); more > 0 {
		line(b, text.Hang("  ", st.Muted.Render(fmt.Sprintf("… %d more lines: enter opens step %d with all of them", more, i+1)), w))
	}
	line(b, "")
}

func (m Model) hintsText(b *strings.Builder, i int, s stepResult, w int) {
	st := m.Styles
	open := m.hintsOpen[s.Test]
	switch {
	case len(s.Hints) == 0:
		return
	case open == 0:
		b.WriteString(text.Wrap(st.Muted.Render(fmt.Sprintf("Stuck on step %d? Press h for a hint (%d available).", i+1, len(s.Hints))), w) + "\n")
		return
	}
	head := fmt.Sprintf("Hints for step %d · %d of %d", i+1, open, len(s.Hints))
	if open < len(s.Hints) {
		head += " · h for the next"
	}
	b.WriteString(st.Heading.Render(head) + "\n")
	for k := 0; k < open && k < len(s.Hints); k++ {
		b.WriteString(text.Hang(st.Accent.Render(fmt.Sprintf("%d.", k+1))+" ", st.Text.Render(s.Hints[k]), w) + "\n")
	}
}

// stepsView is the manifest's steps with the last grade's outcome on them.
func (m Model) stepsView() []stepResult {
	if m.report != nil && len(m.report.Steps) > 0 {
		return m.report.Steps
	}
	out := make([]stepResult, len(m.lab.Steps))
	for i, s := range m.lab.Steps {
		out[i] = newStep(s)
	}
	return out
}

func (m Model) getLabsText(w int) string {
	st := m.Styles
	var b strings.Builder
	p := func(s string) { b.WriteString(text.Wrap(s, w) + "\n") }
	if m.labDir != "" {
		// Inside a checkout whose labs/<id> was deleted or moved: say so,
		// and how to get the folder back from git.
		rel := "labs/" + m.lab.ID
		b.WriteString(st.Heading.Render(rel+" is missing") + "\n\n")
		p(st.Text.Render("This is a checkout of the course, but it has no " + rel + " folder (looked for " + m.labDir + "). Get it back from git, from the top of the checkout:"))
		b.WriteString("\n")
		for _, c := range []string{"git restore " + rel, "git checkout HEAD -- " + rel + "   (older git)"} {
			b.WriteString("  " + st.Code.Render(c) + "\n")
		}
		b.WriteString("\n")
		p(st.Text.Render("Then open this lab again from the course map. Meanwhile the README (tab) tells you what the lab asks."))
		return b.String()
	}
	b.WriteString(st.Heading.Render("The labs are not on this machine") + "\n\n")
	p(st.Text.Render("This playground was installed as a program, so there is no labs/" + m.lab.ID +
		" folder to edit and grade. The labs are Go files you change in your own editor, so they live in a checkout of the course:"))
	b.WriteString("\n")
	for _, c := range []string{"git clone " + RepoURL, "cd playground", "go run ./cmd/playground"} {
		b.WriteString("  " + st.Code.Render(c) + "\n")
	}
	b.WriteString("\n")
	p(st.Text.Render("Then open this lab again from the course map. Meanwhile the README (tab) tells you what the lab asks."))
	return b.String()
}

// codeLoc styles a leading "file.go:12:3:" so compiler and test locations
// stand out from the message.
func codeLoc(style func(...string) string, s string) string {
	i := strings.Index(s, ".go:")
	if i < 0 {
		return s
	}
	j := i + len(".go:")
	for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ':') {
		j++
	}
	if strings.ContainsAny(s[:i], " \t") {
		return s
	}
	return style(s[:j]) + s[j:]
}
