// Package progressview is the progress screen: every lesson with its
// pages, checkpoints, quiz (best and first score), labs (passed, verified,
// or the step that fails) and experiments (runs, prediction), and the
// course's totals. Enter opens what the cursor is on; r forgets a lesson,
// a lab or an experiment after a confirmation.
package progressview

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/progress/report"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/internal/tui/text"
	"github.com/ownership-election/playground/internal/tui/theme"
	"github.com/ownership-election/playground/lessons"
)

// KeyMap is the progress screen's bindings.
type KeyMap struct {
	theme.NavKeys
	Open    key.Binding
	Reset   key.Binding
	Confirm key.Binding
}

// DefaultKeyMap returns the progress screen's bindings.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		NavKeys: theme.DefaultNavKeys(),
		Open:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open")),
		Reset:   key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "reset")),
		Confirm: key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "yes, forget it")),
	}
}

// rowKind is what a row of the list is about.
type rowKind int

const (
	rowLesson rowKind = iota
	rowChecks
	rowQuiz
	rowLab
	rowLabRuns // the lab's code run as replicas under faults
	rowExperiment
)

// row is one selectable line.
type row struct {
	kind   rowKind
	lesson report.Lesson
	lab    report.Lab
	exp    report.Experiment
}

// Model is the progress screen.
type Model struct {
	screen.Base
	course *lessons.Course
	file   string
	keys   KeyMap

	rep     report.Report
	rows    []row
	cursor  int
	offset  int                   // first list line shown
	confirm *screen.ResetProgress // the reset waiting for y
}

// Options configure the progress screen.
type Options struct {
	// File is where the progress is saved, shown at the bottom.
	File string
}

// New builds the progress screen of ctx.Course from ctx.Progress.
func New(ctx screen.Context, opts Options) *Model {
	m := &Model{Base: screen.NewBase(ctx), course: ctx.Course, file: opts.File, keys: DefaultKeyMap()}
	m.refresh(ctx.Progress)
	return m
}

var _ screen.Screen = (*Model)(nil)

// Title names the screen.
func (m *Model) Title() string { return "Your progress" }

// Status counts the course's pages read.
func (m *Model) Status() string {
	t := m.rep.Totals
	return fmt.Sprintf("pages %d/%d", t.PagesRead, t.Pages)
}

// Capturing is true while a reset waits for its confirmation: esc cancels it.
func (m *Model) Capturing() bool { return m.confirm != nil }

// Update moves the cursor, opens the selected item, asks for and sends a
// reset; progress news rebuild the list.
func (m *Model) Update(msg tea.Msg) (screen.Screen, tea.Cmd) {
	switch msg := msg.(type) {
	case screen.ProgressChanged:
		m.refresh(msg.Progress)
		return m, nil
	case tea.KeyPressMsg:
		return m, m.key(msg)
	}
	return m, nil
}

func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	if m.confirm != nil {
		r := *m.confirm
		m.confirm = nil
		if key.Matches(k, m.keys.Confirm) {
			return screen.Send(r)
		}
		return nil // any other key cancels
	}
	if len(m.rows) == 0 {
		return nil
	}
	switch {
	case key.Matches(k, m.keys.Up):
		m.cursor = max(m.cursor-1, 0)
	case key.Matches(k, m.keys.Down):
		m.cursor = min(m.cursor+1, len(m.rows)-1)
	case key.Matches(k, m.keys.PageUp):
		m.cursor = max(m.cursor-max(m.listHeight()/2, 1), 0)
	case key.Matches(k, m.keys.PageDown):
		m.cursor = min(m.cursor+max(m.listHeight()/2, 1), len(m.rows)-1)
	case key.Matches(k, m.keys.Top):
		m.cursor = 0
	case key.Matches(k, m.keys.Bottom):
		m.cursor = len(m.rows) - 1
	case key.Matches(k, m.keys.Open):
		return screen.Send(m.open(m.rows[m.cursor]))
	case key.Matches(k, m.keys.Reset):
		r := m.resetOf(m.rows[m.cursor])
		m.confirm = &r
	}
	return nil
}

// open is the message that opens what a row is about.
func (m *Model) open(r row) tea.Msg {
	switch r.kind {
	case rowChecks:
		// The first checkpoint not answered right, else the first.
		page := r.lesson.Checks[0].Page
		for _, c := range r.lesson.Checks {
			if c.State != report.CheckRight {
				page = c.Page
				break
			}
		}
		return screen.OpenLesson{Lesson: r.lesson.ID, Page: page}
	case rowQuiz:
		return screen.OpenQuiz{Lesson: r.lesson.ID}
	case rowLab, rowLabRuns:
		return screen.OpenLab{Lab: r.lab.ID}
	case rowExperiment:
		return screen.OpenExperiment{Name: r.exp.Name}
	}
	return screen.OpenLesson{Lesson: r.lesson.ID, Page: -1}
}

// resetOf is what r forgets on a row: its lab or experiment, else its
// whole lesson (pages, checkpoints, quiz and labs passed go together).
func (m *Model) resetOf(r row) screen.ResetProgress {
	switch r.kind {
	case rowLab, rowLabRuns:
		return screen.ResetProgress{Lab: r.lab.ID, What: m.course.LabName(r.lab.ID) + " (its grades, its pass and its runs under faults)"}
	case rowExperiment:
		return screen.ResetProgress{Experiment: r.exp.Name, What: "experiment " + r.exp.Name + " (its runs and your prediction)"}
	}
	return screen.ResetProgress{Lesson: r.lesson.ID,
		What: fmt.Sprintf("lesson %02d %s (pages read, checkpoints, quiz, labs passed)", r.lesson.Number, r.lesson.Title)}
}

func (m *Model) refresh(p *progress.Progress) {
	if p == nil {
		p = progress.New()
	}
	m.rep = report.Build(m.course, p, m.file)
	m.rows = m.rows[:0]
	for _, l := range m.rep.Lessons {
		m.rows = append(m.rows, row{kind: rowLesson, lesson: l})
		if l.Checkpoints > 0 {
			m.rows = append(m.rows, row{kind: rowChecks, lesson: l})
		}
		if l.HasQuiz {
			m.rows = append(m.rows, row{kind: rowQuiz, lesson: l})
		}
		for _, lab := range l.Labs {
			m.rows = append(m.rows, row{kind: rowLab, lesson: l, lab: lab})
			if lab.Runs != nil {
				m.rows = append(m.rows, row{kind: rowLabRuns, lesson: l, lab: lab})
			}
		}
		for _, e := range l.Experiments {
			m.rows = append(m.rows, row{kind: rowExperiment, lesson: l, exp: e})
		}
	}
	m.cursor = min(m.cursor, max(len(m.rows)-1, 0))
}

// listHeight is the lines left for the list under the totals and above
// the confirmation or file line.
func (m *Model) listHeight() int { return max(m.Height-6, 1) }

// View draws the totals, the list around the cursor and the file.
func (m *Model) View() string {
	st := m.Styles
	var b strings.Builder
	lines := make([]string, len(m.rows))
	for i, r := range m.rows {
		lines[i] = m.rowLine(r, i == m.cursor)
	}
	totals := text.Wrap(totalsLine(m.rep.Totals), m.Width)
	h := max(m.Height-strings.Count(totals, "\n")-4, 1)
	// Keep the cursor in view.
	if m.cursor < m.offset {
		m.offset = m.cursor
	} else if m.cursor >= m.offset+h {
		m.offset = m.cursor - h + 1
	}
	b.WriteString(st.Text.Render(totals) + "\n\n")
	b.WriteString(text.Window(lines, m.offset, h))
	b.WriteString("\n\n")
	if m.confirm != nil {
		b.WriteString(st.Warning.Render(text.Truncate("Forget "+m.confirm.What+"? y to forget, any other key keeps it.", m.Width)))
	} else {
		b.WriteString(st.Muted.Render(text.Truncate("Saved in "+m.rep.File, m.Width)))
	}
	return b.String()
}

func totalsLine(t report.Totals) string {
	s := fmt.Sprintf("Total: pages %d/%d · checkpoints %d/%d right · quizzes %d/%d taken · labs %d/%d passed · experiments %d/%d run",
		t.PagesRead, t.Pages, t.ChecksRight, t.Checkpoints, t.QuizzesTaken, t.Quizzes, t.LabsPassed, t.Labs, t.ExperimentsRun, t.Experiments)
	if t.PredictionsMade > 0 {
		s += fmt.Sprintf(" · predictions %d/%d right", t.Predictions, t.PredictionsMade)
	}
	return s
}

// rowLine is one row: a label column and what the learner did.
func (m *Model) rowLine(r row, selected bool) string {
	st := m.Styles
	labelW := max(22, min(36, (m.Width-6)/3))
	var label, state string
	good := false
	switch r.kind {
	case rowLesson:
		label = fmt.Sprintf("%02d %s", r.lesson.Number, r.lesson.Title)
		state = fmt.Sprintf("pages %d/%d", r.lesson.PagesRead, r.lesson.Pages)
		good = r.lesson.Pages > 0 && r.lesson.PagesRead >= r.lesson.Pages
		line := text.Truncate(label, max(m.Width-2-len(state)-2, 10))
		line += text.Spaces(m.Width-2-ansi.StringWidth(line)-len(state)) + state
		if selected {
			return st.Cursor.Render("› ") + st.Selected.Render(line)
		}
		if good {
			return "  " + st.Success.Render(line)
		}
		return "  " + st.Heading.Render(line)
	case rowChecks:
		label = "checkpoints"
		state, good = checksState(r.lesson)
	case rowQuiz:
		label = "quiz"
		state = "not taken"
		if r.lesson.QuizTaken {
			state = fmt.Sprintf("best %s · first %s · %d attempt%s", pct(r.lesson.QuizBest), pct(r.lesson.QuizFirst), r.lesson.QuizAttempts, plural(r.lesson.QuizAttempts))
			good = r.lesson.QuizBest >= 1
		}
	case rowLab:
		label = m.course.LabName(r.lab.ID) + " · " + r.lab.ID
		state, good = labState(r.lab)
	case rowLabRuns:
		label = "  under faults"
		state, good = report.RunsText(*r.lab.Runs), r.lab.Runs.LastHeld
	case rowExperiment:
		label = "experiment " + r.exp.Name
		state, good = experimentState(r.exp)
	}
	label = text.Truncate(label, labelW-1)
	line := "   " + label + text.Spaces(labelW-ansi.StringWidth(label)) + state
	line = text.Truncate(line, m.Width-2)
	switch {
	case selected:
		return st.Cursor.Render("› ") + st.Selected.Render(line)
	case good:
		return "  " + st.Success.Render(line)
	}
	return "  " + st.Text.Render(line)
}

func checksState(l report.Lesson) (string, bool) {
	var wrong, partial int
	for _, c := range l.Checks {
		switch c.State {
		case report.CheckWrong:
			wrong++
		case report.CheckPartial:
			partial++
		}
	}
	s := fmt.Sprintf("%d/%d right", l.ChecksRight, l.Checkpoints)
	var more []string
	if partial > 0 {
		more = append(more, fmt.Sprintf("%d partly", partial))
	}
	if wrong > 0 {
		more = append(more, fmt.Sprintf("%d wrong", wrong))
	}
	if open := l.Checkpoints - l.ChecksAnswered; open > 0 {
		more = append(more, fmt.Sprintf("%d not answered", open))
	}
	if len(more) > 0 {
		s += " · " + strings.Join(more, " · ")
	}
	return s, l.ChecksRight == l.Checkpoints
}

func labState(l report.Lab) (string, bool) {
	switch {
	case l.Status == progress.LabStatusPassed:
		return "✓ passed, verified", true
	case l.Status == report.LabNotGraded:
		return "not graded yet", false
	}
	s := string(l.Status)
	if l.Step != "" {
		s += " at " + l.Step
	}
	if l.PassedOnce {
		s = "passed before; now " + s
	}
	return "✗ " + s, false
}

func experimentState(e report.Experiment) (string, bool) {
	s := "not run"
	if e.Runs > 0 {
		s = fmt.Sprintf("ran %d time%s", e.Runs, plural(e.Runs))
		if e.Shown {
			s += ", effect shown"
		}
	}
	switch e.Predicted {
	case "right":
		s += " · predicted right"
	case "wrong":
		s += " · predicted wrong"
	}
	return s, e.Runs > 0
}

func pct(share float64) string { return fmt.Sprintf("%d%%", int(share*100+0.5)) }

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// ShortHelp lists the main keys.
func (m *Model) ShortHelp() []key.Binding {
	if m.confirm != nil {
		return []key.Binding{m.keys.Confirm}
	}
	return []key.Binding{m.keys.Up, m.keys.Down, m.keys.Open, m.keys.Reset}
}

// FullHelp lists every key.
func (m *Model) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{m.keys.Up, m.keys.Down, m.keys.PageUp, m.keys.PageDown, m.keys.Top, m.keys.Bottom},
		{m.keys.Open, m.keys.Reset, m.keys.Confirm},
	}
}
