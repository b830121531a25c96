package lab

import (
	"fmt"
	"os"
	"os/exec"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/labstub"
)

type readmeRenderedMsg struct {
	lab   string
	width int
	out   string
	err   error
}

type editorDoneMsg struct{ err error }

type resetDoneMsg struct {
	backup string
	err    error
}

// readmeWidth is the wrap width of the README for the current layout.
func (m Model) readmeWidth() int {
	w := m.readmeVP.Width() - 2
	if w < 20 {
		w = 20
	}
	return w
}

// maybeRenderReadme asks for a rendering when the width changed and none
// is cached or in flight; the view shows plain wrapped text meanwhile.
func (m *Model) maybeRenderReadme() tea.Cmd {
	w := m.readmeWidth()
	if _, ok := m.readmeRendered[w]; ok || m.readmeWant == w {
		return nil
	}
	return m.renderReadmeCmd()
}

func (m *Model) renderReadmeCmd() tea.Cmd {
	if !m.opened {
		return nil
	}
	w := m.readmeWidth()
	if _, ok := m.readmeRendered[w]; ok {
		return nil
	}
	m.readmeWant = w
	src, lab, st := m.readmeSrc, m.lab.ID, m.Styles
	return func() tea.Msg {
		out, err := st.RenderMarkdown(unwrapMarkdown(src), w)
		if err != nil {
			return readmeRenderedMsg{lab: lab, width: w, err: fmt.Errorf("README: %w", err)}
		}
		return readmeRenderedMsg{lab: lab, width: w, out: strings.Trim(out, "\n")}
	}
}

// editorCommand picks the learner's editor; "code --wait" style values are
// split into a program and its arguments.
func (m Model) editorCommand() []string {
	for _, e := range []string{m.opts.Editor, os.Getenv("VISUAL"), os.Getenv("EDITOR")} {
		if f := strings.Fields(e); len(f) > 0 {
			return f
		}
	}
	return []string{"vi"}
}

func (m Model) editCmd() tea.Cmd {
	argv := append(m.editorCommand(), m.stubPath())
	c := exec.Command(argv[0], argv[1:]...)
	c.Dir = m.labDir
	return tea.ExecProcess(c, func(err error) tea.Msg {
		if err != nil {
			err = fmt.Errorf("open %s in %s: %w", m.lab.File, argv[0], err)
		}
		return editorDoneMsg{err: err}
	})
}

// resetCmd puts the original stub back, the learner's file kept aside
// first (labstub.Reset).
func (m Model) resetCmd() tea.Cmd {
	stub, root, catalog := m.stubPath(), m.opts.Root, m.opts.Catalog
	rel := m.lab.ID + "/" + m.lab.File
	now := m.now()
	return func() tea.Msg {
		orig, err := labstub.Original(catalog, root, rel)
		if err != nil {
			return resetDoneMsg{err: fmt.Errorf("reset %s: %w", rel, err)}
		}
		backup, err := labstub.Reset(stub, orig, now)
		if err != nil {
			return resetDoneMsg{err: fmt.Errorf("reset %s: %w", rel, err)}
		}
		return resetDoneMsg{backup: backup}
	}
}
