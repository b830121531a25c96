// Package classboard is the instructor's live class view: one row per
// learner with lessons read, quiz scores and labs passed, redrawn as their
// summaries arrive through the board's watch.
package classboard

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/class"
	"github.com/ownership-election/playground/internal/tui/theme"
)

// KeyMap is the board's bindings.
type KeyMap struct {
	theme.NavKeys
	Sort key.Binding
	Help key.Binding
	Quit key.Binding
}

// DefaultKeyMap returns the board's bindings.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		NavKeys: theme.DefaultNavKeys(),
		Sort:    key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort by name/progress")),
		Help:    key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:    key.NewBinding(key.WithKeys("q", "esc", "ctrl+c"), key.WithHelp("q", "quit")),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.Sort, k.Help, k.Quit}
}

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {k.Sort, k.Help, k.Quit}}
}

// Options is what the board shows and where updates come from.
type Options struct {
	Course   class.Course
	Snapshot func() []class.Summary // the board's current state
	State    func() class.State     // live or reconnecting, and alarms; nil: always live
	Changes  <-chan string          // a learner's name each time their line changes; closed when the watch ends
	Where    string                 // the cluster, for the title
	Now      func() time.Time       // clock, for "updated" ages (tests)
}

// ChangedMsg says a learner's summary changed.
type ChangedMsg struct{ Learner string }

// WatchEndedMsg says the board no longer updates.
type WatchEndedMsg struct{}

// Model is the board screen; it is also a root model (View returns
// tea.View) since `class status` runs it as a program of its own.
type Model struct {
	opts     Options
	keys     KeyMap
	help     help.Model
	styles   theme.Styles
	rows     []class.Row
	byProg   bool
	top      int
	cursor   int
	width    int
	height   int
	changed  map[string]time.Time // learners whose line changed, when
	watching bool
}

// New builds the board.
func New(opts Options) Model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	m := Model{opts: opts, keys: DefaultKeyMap(), help: help.New(), styles: theme.DefaultStyles(true),
		width: 80, height: 24, changed: map[string]time.Time{}, watching: opts.Changes != nil}
	m.help.Styles = m.styles.Help
	m.refresh()
	return m
}

// Init waits for the first change and asks for the background colour.
func (m Model) Init() tea.Cmd {
	return tea.Batch(tea.RequestBackgroundColor, m.wait())
}

func (m Model) wait() tea.Cmd {
	if m.opts.Changes == nil {
		return nil
	}
	ch := m.opts.Changes
	return func() tea.Msg {
		name, ok := <-ch
		if !ok {
			return WatchEndedMsg{}
		}
		return ChangedMsg{Learner: name}
	}
}

func (m *Model) refresh() {
	m.rows = class.Rows(m.opts.Course, m.opts.Snapshot(), m.opts.Now())
	if m.byProg {
		slices.SortStableFunc(m.rows, func(a, b class.Row) int {
			if d := (b.LabsPassed*10000 + b.PagesRead) - (a.LabsPassed*10000 + a.PagesRead); d != 0 {
				return d
			}
			return strings.Compare(a.Learner, b.Learner)
		})
	}
	m.cursor = min(m.cursor, max(len(m.rows)-1, 0))
}

// Update handles keys, sizes and board changes.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.SetWidth(msg.Width)
	case tea.BackgroundColorMsg:
		m.styles = theme.DefaultStyles(msg.IsDark())
		m.help.Styles = m.styles.Help
	case ChangedMsg:
		m.changed[msg.Learner] = m.opts.Now()
		m.refresh()
		return m, m.wait()
	case WatchEndedMsg:
		m.watching = false
	case tea.KeyPressMsg:
		k := m.keys
		switch {
		case key.Matches(msg, k.Quit):
			return m, tea.Quit
		case key.Matches(msg, k.Help):
			m.help.ShowAll = !m.help.ShowAll
		case key.Matches(msg, k.Sort):
			m.byProg = !m.byProg
			m.refresh()
		case key.Matches(msg, k.Up):
			m.cursor = max(m.cursor-1, 0)
		case key.Matches(msg, k.Down):
			m.cursor = min(m.cursor+1, max(len(m.rows)-1, 0))
		case key.Matches(msg, k.PageUp):
			m.cursor = max(m.cursor-m.visible(), 0)
		case key.Matches(msg, k.PageDown):
			m.cursor = min(m.cursor+m.visible(), max(len(m.rows)-1, 0))
		case key.Matches(msg, k.Top):
			m.cursor = 0
		case key.Matches(msg, k.Bottom):
			m.cursor = max(len(m.rows)-1, 0)
		}
	}
	m.scroll()
	return m, nil
}

// visible is how many learner rows fit between the header and the help.
func (m Model) visible() int {
	helpLines := 1
	if m.help.ShowAll {
		helpLines = 7
	}
	return max(m.height-5-helpLines, 1)
}

func (m *Model) scroll() {
	v := m.visible()
	if m.cursor < m.top {
		m.top = m.cursor
	}
	if m.cursor >= m.top+v {
		m.top = m.cursor - v + 1
	}
	m.top = max(min(m.top, len(m.rows)-v), 0)
}

// View draws the board.
func (m Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	return v
}

// Render is the board as text (View's content), for tests and benchmarks.
func (m Model) Render() string {
	s := m.styles
	var b strings.Builder
	passedAll := 0
	for _, r := range m.rows {
		passedAll += r.LabsPassed
	}
	st := m.state()
	state := s.Muted.Render("live")
	switch {
	case !m.watching:
		state = s.Error.Render("not updating")
	case !st.Live:
		state = s.Warning.Render("reconnecting")
	}
	b.WriteString(s.Title.Render("Class") + s.Muted.Render(fmt.Sprintf("  %d learners · %d labs passed · %s · ", len(m.rows), passedAll, m.opts.Where)) + state)
	b.WriteString("\n")
	b.WriteString(m.notice(st) + "\n")
	labW := max(len(m.opts.Course.Labs), 4)
	nameW := max(min(m.width-48-labW, 24), 8)
	b.WriteString(s.Heading.Render(fmt.Sprintf("  %-*s %-5s %-8s %-11s %-6s %-*s %s", nameW, "learner", "read", "lessons", "quizzes", "labs", labW, "passed", "updated")))
	b.WriteString("\n")
	now := m.opts.Now()
	end := min(m.top+m.visible(), len(m.rows))
	for i := m.top; i < end; i++ {
		r := m.rows[i]
		quiz := "-"
		if r.QuizzesTaken > 0 {
			quiz = fmt.Sprintf("%d, %3.0f%%", r.QuizzesTaken, 100*r.QuizAverage)
		}
		var marks strings.Builder
		for _, c := range r.Checks {
			marks.WriteString(m.mark(c))
		}
		marks.WriteString(strings.Repeat(" ", labW-len(r.Checks)))
		updated := s.Muted.Render("never")
		if !r.Updated.IsZero() {
			updated = ago(now.Sub(r.Updated))
		}
		name := ansi.Truncate(r.Learner, nameW, "…")
		if len(r.Invalid) > 0 {
			line := fmt.Sprintf("%-*s ", nameW, name)
			if i == m.cursor {
				line = s.Selected.Render(line)
			}
			why := ansi.Truncate("✗ invalid summary: "+r.Invalid[0], max(m.width-nameW-6, 10), "…")
			b.WriteString("  " + line + s.Error.Render(why) + "\n")
			continue
		}
		line := fmt.Sprintf("%-*s %-5s %-8s %-11s %-6s ", nameW, name, fmt.Sprintf("%d%%", r.Percent(m.opts.Course)), fmt.Sprintf("%d/%d", r.LessonsRead, len(m.opts.Course.Lessons)), quiz, fmt.Sprintf("%d/%d", r.LabsPassed, len(m.opts.Course.Labs)))
		mark := "  "
		if at, ok := m.changed[r.Learner]; ok && now.Sub(at) < 10*time.Second {
			mark = s.Warning.Render("• ")
		}
		if i == m.cursor {
			line = s.Selected.Render(line)
		}
		b.WriteString(mark + line + marks.String() + " " + updated + "\n")
	}
	if len(m.rows) == 0 {
		b.WriteString(s.Muted.Render("  Nobody is on the roster yet: run playground class setup --learners FILE.") + "\n")
	}
	for i := end - m.top; i < m.visible(); i++ {
		b.WriteString("\n")
	}
	b.WriteString("\n" + m.help.View(m.keys))
	return s.App.Render(b.String())
}

// mark draws one lab's state: ✓ verified by class verify, ○ claimed (not
// verified yet), ✗ refused by it, · not passed.
func (m Model) mark(c class.Check) string {
	s := m.styles
	switch c.State {
	case class.Verified:
		return s.Success.Render("✓")
	case class.Claimed:
		return s.Warning.Render("○")
	case class.Refused:
		return s.Error.Render("✗")
	}
	return s.Muted.Render("·")
}

// state is the board's connection state; a board without a State source
// (tests, benchmarks) is live.
func (m Model) state() class.State {
	if m.opts.State == nil {
		return class.State{Live: true}
	}
	return m.opts.State()
}

// notice is the line under the title: an alarm first (it stops the whole
// class), then the learners over budget (who may fill it), then why the
// board is reconnecting, else the legend.
func (m Model) notice(st class.State) string {
	w := max(m.width-4, 20)
	switch {
	case st.Alarm != "":
		return m.styles.Error.Render(ansi.Truncate("⚠ "+st.Alarm, w, "…"))
	case st.OverBudget != "":
		return m.styles.Warning.Render(ansi.Truncate("⚠ "+st.OverBudget, w, "…"))
	case m.watching && !st.Live && st.Reason != "":
		return m.styles.Warning.Render(ansi.Truncate("reconnecting: "+st.Reason, w, "…"))
	}
	return m.styles.Muted.Render(ansi.Truncate("passed: ✓ verified · ○ claimed, not verified yet · ✗ refused by class verify", w, "…"))
}

func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d.Hours()))
	default:
		return fmt.Sprintf("%d days ago", int(d.Hours()/24))
	}
}
