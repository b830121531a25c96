package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/ownership-election/playground/internal/tui/text"
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
	top := m.top()
	title := top.Title()
	var parts []string
	switch {
	case m.showHelp:
		if title == "" {
			title = "Help"
		}
		parts = append(parts, m.styles.Title.Render(text.Truncate(title+" · keys", bw)), text.Fit(m.fullHelp(), bw, bh))
	case title == "":
		parts = append(parts, text.Fit(top.View(), bw, bh+1))
	default:
		parts = append(parts, m.styles.Title.Render(text.Truncate(title, bw)), text.Fit(top.View(), bw, bh))
	}
	helpLine := m.help.ShortHelpView(m.shortHelp())
	parts = append(parts, m.statusLine(bw), text.Truncate(helpLine, bw))
	return text.Indent(strings.Join(parts, "\n"), " ")
}

// statusLine shows a notice when there is one, else the screen's position,
// what watch mode last did, and the etcd status.
func (m Model) statusLine(w int) string {
	if m.notice != "" {
		st := m.styles.Warning
		if m.noticeIsErr {
			st = m.styles.Error
		}
		return st.Render(text.Truncate(m.notice, w))
	}
	if m.watch.Lab() != "" {
		return m.statusWithWatch(w)
	}
	left := m.top().Status()
	right := m.etcd.line(m.styles, w/2+w/4)
	if m.classProblem != "" {
		// It stops progress reaching the instructor: it takes the
		// whole line, the screen's position gives way.
		return m.styles.Error.Render(text.Truncate(m.classProblem, w))
	}
	gap := w - lipgloss.Width(left) - lipgloss.Width(right)
	if gap < 1 && left != "" {
		// The screen's state says what its keys do now (auto-play or
		// step mode); etcd's address can wait for a wider terminal.
		right = m.etcd.short(m.styles)
		left = text.Truncate(left, w-lipgloss.Width(right)-1)
		gap = w - lipgloss.Width(left) - lipgloss.Width(right)
	}
	if gap < 1 {
		return text.Truncate(right, w)
	}
	return m.styles.Muted.Render(left) + text.Spaces(gap) + right
}

// globalKeys are the shared keys that apply on the active screen: quit on
// home, back elsewhere unless the screen holds esc itself (it lists its
// own use of esc then).
// The offer of the next lab (o) is in the status line, not here: the
// line has no room left for it at 80 columns.
func (m Model) globalKeys() []key.Binding {
	switch {
	case m.atHome():
		return []key.Binding{m.keys.Progress, m.keys.Help, m.keys.Quit}
	case m.top().Capturing():
		return []key.Binding{m.keys.Help}
	}
	return []key.Binding{m.keys.Back, m.keys.Help}
}

// shortHelp is the one-line key help of the screen on top, followed by the
// global keys that apply there.
func (m Model) shortHelp() []key.Binding {
	return append(m.top().ShortHelp(), m.globalKeys()...)
}

// fullHelp is every key of the screen on top, in columns, and under them
// the keys that work everywhere on one line: as a column of their own they
// were the first to be cut when the screen's columns filled the width.
func (m Model) fullHelp() string {
	groups := m.top().FullHelp()
	global := []key.Binding{m.keys.Progress, m.keys.Help, m.keys.Back, m.keys.ForceQuit}
	if m.atHome() {
		global = []key.Binding{m.keys.Progress, m.keys.Help, m.keys.Quit, m.keys.ForceQuit}
	}
	if m.offer() != "" {
		global = append([]key.Binding{m.keys.NextLab}, global...)
	}
	h := m.help
	h.ShowAll = true
	var b strings.Builder
	b.WriteString(m.styles.Heading.Render("Keys on this screen"))
	b.WriteString("\n\n")
	b.WriteString(h.FullHelpView(groups))
	b.WriteString("\n\n")
	b.WriteString(m.styles.Heading.Render("Everywhere"))
	b.WriteString("\n")
	b.WriteString(h.ShortHelpView(global))
	b.WriteString("\n\n")
	b.WriteString(m.styles.Muted.Render("Press any key to close this help."))
	return b.String()
}
