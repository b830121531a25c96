package lab

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/aymanbagabas/go-udiff"

	"github.com/ownership-election/playground/internal/tui/text"
)

// diffContext is how many unchanged lines stand around each change, as
// in diff -u and git diff.
const diffContext = 3

// solutionUI is what the solution pane compares: the learner's file as it
// was when the solution was (re)loaded, and whether the pane shows the
// whole solution rather than the diff.
type solutionUI struct {
	mine    string
	mineErr error // the learner's file could not be read: only the whole solution
	hunks   []*udiff.Hunk
	whole   bool
}

// solutionLoadedMsg carries the reference solution and the learner's
// file. refresh is set when the pane was already open: it keeps its place
// instead of coming to the front.
type solutionLoadedMsg struct {
	text    string
	mine    string
	mineErr error
	err     error
	refresh bool
}

// loadSolutionCmd reads the reference solution and the learner's file off
// the UI goroutine; the solution pane then shows their diff.
func (m Model) loadSolutionCmd() tea.Cmd { return m.readSolutionCmd(false) }

// refreshSolutionCmd reads both again for a solution pane already open:
// the learner saved, or a grade came in.
func (m Model) refreshSolutionCmd() tea.Cmd { return m.readSolutionCmd(true) }

func (m Model) readSolutionCmd(refresh bool) tea.Cmd {
	path, stub := m.solutionPath(), m.stubPath()
	rel := "labs/" + m.lab.ID + "/" + m.lab.File
	return func() tea.Msg {
		b, err := os.ReadFile(path)
		if err != nil {
			return solutionLoadedMsg{err: fmt.Errorf("read the reference solution: %w", err), refresh: refresh}
		}
		msg := solutionLoadedMsg{text: string(b), refresh: refresh}
		mine, err := os.ReadFile(stub)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			msg.mineErr = fmt.Errorf("your file %s is missing (r puts the original back)", rel)
		case err != nil:
			msg.mineErr = fmt.Errorf("read your file %s: %w", rel, err)
		}
		msg.mine = string(mine)
		return msg
	}
}

// solutionLoaded shows what loadSolutionCmd read.
func (m *Model) solutionLoaded(msg solutionLoadedMsg) {
	if msg.err != nil {
		if !msg.refresh {
			m.setNotice(msg.err.Error(), true)
		}
		return
	}
	m.solution = msg.text
	m.sol.mine, m.sol.mineErr = msg.mine, msg.mineErr
	m.sol.hunks = nil
	if msg.mineErr == nil {
		m.sol.hunks = diffHunks(msg.mine, msg.text)
	}
	if msg.refresh {
		off := m.solutionVP.YOffset()
		m.layout()
		m.solutionVP.SetYOffset(off)
		return
	}
	m.pane = paneSolution
	m.layout()
	m.solutionVP.GotoTop()
}

// solutionKeys handles the solution pane's own key: d switches between
// the diff and the whole solution. It reports whether the key was it.
func (m *Model) solutionKeys(msg tea.KeyPressMsg) bool {
	if m.pane != paneSolution || m.solution == "" || !key.Matches(msg, m.keys.Diff) {
		return false
	}
	m.sol.whole = !m.sol.whole
	m.layout()
	m.solutionVP.GotoTop()
	return true
}

// solutionText is the solution pane: the diff of the learner's file
// against the reference solution, or the whole solution.
func (m Model) solutionText(w int) string {
	if m.solution == "" {
		return ""
	}
	if m.sol.whole || m.sol.mineErr != nil {
		return m.wholeSolutionText(w)
	}
	return m.diffText(w)
}

// diffText is the learner's file against the solution as a unified diff:
// lines only in the learner's file start with "-", lines only in the
// solution with "+".
func (m Model) diffText(w int) string {
	st := m.Styles
	var b strings.Builder
	line := func(s string) { b.WriteString(s + "\n") }
	mine, ref := "labs/"+m.lab.ID+"/"+m.lab.File, "solutions/"+m.lab.ID+"/"+m.lab.File

	n := 0
	for _, h := range m.sol.hunks {
		for _, l := range h.Lines {
			if l.Kind != udiff.Equal {
				n++
			}
		}
	}
	head := "Your file → solution"
	if len(m.sol.hunks) == 0 {
		line(text.Wrap(st.Heading.Render(head), w))
		line("")
		line(text.Wrap(st.Success.Render("Your "+m.lab.File+" is the same as the reference solution, line for line.")+
			st.Muted.Render(" d shows it whole."), w))
		return b.String()
	}
	line(text.Wrap(st.Heading.Render(head)+st.Muted.Render(fmt.Sprintf(" · %d changed line%s in %d place%s · d: whole solution",
		n, plural(n), len(m.sol.hunks), plural(len(m.sol.hunks)))), w))
	line(text.Wrap(st.Error.UnsetBold().Render("- only in yours ("+mine+")"), w))
	line(text.Wrap(st.Success.Render("+ only in the solution ("+ref+")"), w))
	line("")

	del, ins := st.Error.UnsetBold(), st.Success
	for _, h := range m.sol.hunks {
		line(st.Accent.Render(text.Truncate(hunkHeader(h), w)))
		for _, l := range h.Lines {
			noNewline := !strings.HasSuffix(l.Content, "\n")
			body := strings.ReplaceAll(strings.TrimSuffix(l.Content, "\n"), "\t", "    ")
			prefix, style := " ", st.Text
			switch l.Kind {
			case udiff.Delete:
				prefix, style = "-", del
			case udiff.Insert:
				prefix, style = "+", ins
			}
			// A wrapped line goes on behind a muted ↪, so that it does
			// not read as a line of context.
			for k, part := range strings.Split(text.Wrap(body, max(w-1, 1)), "\n") {
				if k == 0 {
					line(style.Render(prefix + part))
				} else {
					line(st.Muted.Render("↪") + style.Render(part))
				}
			}
			if noNewline {
				line(st.Muted.Render(text.Truncate(`\ No newline at end of file`, w)))
			}
		}
	}
	return b.String()
}

// diffHunks is the learner's file (mine) against the solution (ref) as
// unified-diff hunks with diffContext lines of context; none when they
// are the same.
func diffHunks(mine, ref string) []*udiff.Hunk {
	d, err := udiff.ToUnifiedDiff("mine", "ref", mine, udiff.Lines(mine, ref), diffContext)
	if err != nil {
		return nil // the edits come from mine itself: they always apply
	}
	return d.Hunks
}

// hunkHeader is a hunk's "@@ -a,b +c,d @@" line as diff -u and git write
// it: a count of one left out, and a side with no lines starting at the
// line before the change.
func hunkHeader(h *udiff.Hunk) string {
	from, to := 0, 0
	for _, l := range h.Lines {
		if l.Kind != udiff.Insert {
			from++
		}
		if l.Kind != udiff.Delete {
			to++
		}
	}
	return fmt.Sprintf("@@ -%s +%s @@", span(h.FromLine, from), span(h.ToLine, to))
}

func span(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start-1)
	case 1:
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

// wholeSolutionText is the reference solution with line numbers.
func (m Model) wholeSolutionText(w int) string {
	st := m.Styles
	var b strings.Builder
	b.WriteString(text.Wrap(st.Heading.Render("Reference solution")+st.Muted.Render(" · solutions/"+m.lab.ID+"/"+m.lab.File), w) + "\n")
	switch {
	case m.sol.mineErr != nil:
		b.WriteString(text.Wrap(st.Warning.Render("No diff: "+m.sol.mineErr.Error()), w) + "\n")
	default:
		b.WriteString(st.Muted.Render(text.Truncate("d: back to the diff with your file", w)) + "\n")
	}
	b.WriteString("\n")
	lines := strings.Split(strings.TrimRight(m.solution, "\n"), "\n")
	for i, l := range lines {
		l = strings.ReplaceAll(l, "\t", "    ")
		b.WriteString(text.Hang(st.Muted.Render(fmt.Sprintf("%4d ", i+1)), l, w) + "\n")
	}
	return b.String()
}
