package lab

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/atomicfile"
)

type readmeRenderedMsg struct {
	lab   string
	width int
	out   string
	err   error
}

type gradeDoneMsg struct {
	seq    int
	report report
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

// resetCmd puts the original stub back. The learner's file is copied aside
// first (next to the stub, with a .bak-<time> suffix that the go tool does
// not compile), and nothing is overwritten before that copy is on disk.
func (m Model) resetCmd() tea.Cmd {
	stub, root, catalog := m.stubPath(), m.opts.Root, m.opts.Catalog
	rel := m.lab.ID + "/" + m.lab.File
	stamp := m.now().Format("20060102-150405")
	return func() tea.Msg {
		orig, err := originalStub(catalog, root, rel)
		if err != nil {
			return resetDoneMsg{err: fmt.Errorf("reset %s: %w", rel, err)}
		}
		backup, err := resetStub(stub, orig, stamp)
		if err != nil {
			return resetDoneMsg{err: fmt.Errorf("reset %s: %w", rel, err)}
		}
		return resetDoneMsg{backup: backup}
	}
}

// originalStub finds the stub as shipped: the embedded catalogue first (it is
// what this binary was built with), then the checkout's last commit.
func originalStub(catalog fs.FS, root, rel string) ([]byte, error) {
	if catalog != nil {
		if b, err := fs.ReadFile(catalog, rel); err == nil {
			return b, nil
		}
	}
	c := exec.Command("git", "show", "HEAD:labs/"+rel)
	c.Dir = root
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		return nil, fmt.Errorf("no original copy of the stub (git show: %v %s)", err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// resetStub writes orig over path after saving the current content to
// path.bak-stamp; it returns the backup's path, or "" when the file already
// was the original.
func resetStub(path string, orig []byte, stamp string) (string, error) {
	cur, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read your code: %w", err)
	}
	backup := ""
	if err == nil {
		if bytes.Equal(cur, orig) {
			return "", nil
		}
		backup = path + ".bak-" + stamp
		for i := 2; ; i++ {
			if _, err := os.Stat(backup); errors.Is(err, fs.ErrNotExist) {
				break
			}
			backup = fmt.Sprintf("%s.bak-%s-%d", path, stamp, i)
		}
		if err := atomicfile.Write(backup, cur, 0o644); err != nil {
			return "", fmt.Errorf("keep your code aside: %w", err)
		}
	}
	if err := atomicfile.Write(path, orig, 0o644); err != nil {
		return backup, fmt.Errorf("write the original stub: %w", err)
	}
	return backup, nil
}

// elapsed formats a duration the way the spinner line shows it.
func elapsed(d time.Duration) string {
	if d < 10*time.Second {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return fmt.Sprintf("%ds", int(d.Round(time.Second).Seconds()))
}
