package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
)

// shortHelp is the one-line key help of the screen on top, followed by the
// global keys that apply there.
func (m Model) shortHelp() []key.Binding {
	var b []key.Binding
	switch m.state {
	case stateHome:
		b = m.home.ShortHelp()
		return append(b, m.keys.Help, m.keys.Quit)
	case stateReader:
		b = m.reader.ShortHelp()
		if m.reader.checkOpen() {
			return append(b, m.keys.Help) // esc closes the checkpoint, listed by the reader
		}
	case stateQuiz:
		b = m.quiz.ShortHelp()
	case stateLab, stateExperiment:
		if m.child != nil {
			// The child lists its own back and help keys.
			return m.child.ShortHelp()
		}
	}
	return append(b, m.keys.Back, m.keys.Help)
}

// fullHelp is every key of the screen on top, in columns.
func (m Model) fullHelp() string {
	var groups [][]key.Binding
	switch m.state {
	case stateHome:
		groups = m.home.FullHelp()
	case stateReader:
		groups = m.reader.FullHelp()
	case stateQuiz:
		groups = m.quiz.FullHelp()
	case stateLab, stateExperiment:
		if m.child != nil {
			groups = m.child.FullHelp()
		}
	}
	global := []key.Binding{m.keys.Help, m.keys.Back, m.keys.ForceQuit}
	if m.state == stateHome {
		global = []key.Binding{m.keys.Help, m.keys.Quit, m.keys.ForceQuit}
	}
	groups = append(groups, global)
	h := m.help
	h.ShowAll = true
	var b strings.Builder
	b.WriteString(m.styles.Heading.Render("Keys on this screen"))
	b.WriteString("\n\n")
	b.WriteString(h.FullHelpView(groups))
	b.WriteString("\n\n")
	b.WriteString(m.styles.Muted.Render("Press any key to close this help."))
	return b.String()
}
