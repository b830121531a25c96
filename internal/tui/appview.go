package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// View draws the active screen inside the shared chrome.
func (m Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.WindowTitle = "playground"
	return v
}

func (m Model) render() string {
	bw, bh := m.bodySize()
	title, body := m.active()
	var parts []string
	switch {
	case m.showHelp:
		parts = append(parts, m.styles.Title.Render(truncate(title+" · keys", bw)), fit(m.fullHelp(), bw, bh))
	case m.child != nil && (m.state == stateLab || m.state == stateExperiment):
		parts = append(parts, fit(body, bw, bh+1))
	default:
		parts = append(parts, m.styles.Title.Render(truncate(title, bw)), fit(body, bw, bh))
	}
	helpLine := m.help.ShortHelpView(m.shortHelp())
	parts = append(parts, m.statusLine(bw), truncate(helpLine, bw))
	return padLeft(strings.Join(parts, "\n"), 1)
}

// active returns the title and body of the screen on top.
func (m Model) active() (string, string) {
	switch m.state {
	case stateReader:
		return m.reader.title(), m.reader.View()
	case stateQuiz:
		return m.quiz.title(), m.quiz.View()
	case stateLab, stateExperiment:
		if m.child != nil {
			name := "Lab"
			if m.state == stateExperiment {
				name = "Experiment"
			}
			return name, m.child.View()
		}
	}
	return "Ownership election playground", m.home.View()
}

// statusLine shows a notice when there is one, else the screen's position
// and the etcd status.
func (m Model) statusLine(w int) string {
	if m.notice != "" {
		st := m.styles.Warning
		if m.noticeIsErr {
			st = m.styles.Error
		}
		return st.Render(truncate(m.notice, w))
	}
	left := ""
	switch m.state {
	case stateReader:
		left = m.reader.position()
	case stateQuiz:
		left = m.quiz.position()
	}
	right := m.etcd.line(m.styles, w/2+w/4)
	gap := w - lipgloss.Width(left) - lipgloss.Width(right)
	if gap < 1 {
		return truncate(right, w)
	}
	return m.styles.Muted.Render(left) + spaces(gap) + right
}

func (m Model) bodySize() (int, int) {
	w := m.width - 2 // App padding
	h := m.height - chromeLines
	return max(w, 10), max(h, 1)
}

// childSize is the area of a lab or experiment screen: they draw their own
// title, so they get the title line too.
func (m Model) childSize() (int, int) {
	w, h := m.bodySize()
	return w, h + 1
}
