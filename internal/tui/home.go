package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/tui/theme"
	"github.com/ownership-election/playground/lessons"
)

// homeKeys are the course map's bindings.
type homeKeys struct {
	nav        theme.NavKeys
	Open       key.Binding
	Continue   key.Binding
	Quiz       key.Binding
	Lab        key.Binding
	Experiment key.Binding
}

func defaultHomeKeys() homeKeys {
	return homeKeys{
		nav:        theme.DefaultNavKeys(),
		Open:       key.NewBinding(key.WithKeys("enter", "right"), key.WithHelp("enter", "read lesson")),
		Continue:   key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "continue")),
		Quiz:       key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "quiz")),
		Lab:        key.NewBinding(key.WithKeys("l"), key.WithHelp("l", "lab")),
		Experiment: key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "experiment")),
	}
}

// lessonRow is what the course map shows about one lesson.
type lessonRow struct {
	lesson    *lessons.Lesson
	pagesRead int
	quiz      string // best score "80%", "–" before any attempt, "" without a quiz
	labs      string // passed/all "1/2", "" when the lesson has none
	nextLab   string // what l opens: the first lab not passed yet, else the first
	done      bool   // every page read, quiz full marks, every lab passed
}

// homeModel is the course map.
type homeModel struct {
	course *lessons.Course
	styles theme.Styles
	keys   homeKeys
	w, h   int

	rows   []lessonRow
	cursor int // index into rows

	last       progress.Position // where to continue; empty Lesson when new
	notice     string            // e.g. the progress file was corrupt
	etcdInfo   string
	etcdFailed bool // the status line cannot hold the reason and log path
}

func newHome(c *lessons.Course, st theme.Styles) homeModel {
	h := homeModel{course: c, styles: st, keys: defaultHomeKeys()}
	h.refresh(progress.New())
	return h
}

func (h *homeModel) setStyles(st theme.Styles) { h.styles = st }
func (h *homeModel) setSize(w, ht int)         { h.w, h.h = w, ht }

// refresh recomputes the rows from progress.
func (h *homeModel) refresh(p *progress.Progress) {
	h.rows = h.rows[:0]
	for _, l := range h.course.Lessons {
		r := lessonRow{lesson: l, quiz: "–"}
		rec := p.Peek(l.ID)
		if rec != nil {
			r.pagesRead = len(rec.PagesRead)
		}
		quizDone := l.Quiz == nil || len(l.QuizQuestions()) == 0
		if l.Quiz == nil || len(l.QuizQuestions()) == 0 {
			r.quiz = ""
		} else if rec != nil && rec.Quiz != nil {
			r.quiz = fmt.Sprintf("%d%%", int(rec.BestQuiz*100+0.5))
			quizDone = rec.BestQuiz >= 1
		}
		passed := 0
		for _, lab := range l.Labs {
			if p.LabPassed(l.ID, lab) {
				passed++
			} else if r.nextLab == "" {
				r.nextLab = lab
			}
		}
		if len(l.Labs) > 0 {
			r.labs = fmt.Sprintf("%d/%d", passed, len(l.Labs))
			if r.nextLab == "" {
				r.nextLab = l.Labs[0]
			}
		}
		r.done = len(l.Pages) > 0 && r.pagesRead >= len(l.Pages) && quizDone && passed == len(l.Labs)
		h.rows = append(h.rows, r)
	}
	h.last = p.Last
	if h.course.Lesson(h.last.Lesson) == nil {
		h.last = progress.Position{}
	}
	if h.cursor >= len(h.rows) {
		h.cursor = max(len(h.rows)-1, 0)
	}
}

func (h homeModel) selected() *lessons.Lesson {
	if h.cursor < 0 || h.cursor >= len(h.rows) {
		return nil
	}
	return h.rows[h.cursor].lesson
}

func (h homeModel) Update(msg tea.Msg) (homeModel, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok || len(h.rows) == 0 {
		return h, nil
	}
	sel := h.selected()
	switch {
	case key.Matches(k, h.keys.nav.Up):
		h.cursor = max(h.cursor-1, 0)
	case key.Matches(k, h.keys.nav.Down):
		h.cursor = min(h.cursor+1, len(h.rows)-1)
	case key.Matches(k, h.keys.nav.Top):
		h.cursor = 0
	case key.Matches(k, h.keys.nav.Bottom):
		h.cursor = len(h.rows) - 1
	case k.Text >= "1" && k.Text <= "9" && len(k.Text) == 1:
		if i := int(k.Text[0] - '1'); i < len(h.rows) {
			h.cursor = i
		}
	case key.Matches(k, h.keys.Open):
		return h, send(openLessonMsg{lesson: sel.ID, page: -1})
	case key.Matches(k, h.keys.Continue):
		if h.last.Lesson != "" {
			return h, send(openLessonMsg{lesson: h.last.Lesson, page: h.last.Page})
		}
		return h, send(openLessonMsg{lesson: h.rows[0].lesson.ID, page: 0})
	case key.Matches(k, h.keys.Quiz):
		return h, send(openQuizMsg{lesson: sel.ID})
	case key.Matches(k, h.keys.Lab):
		if next := h.rows[h.cursor].nextLab; next != "" {
			return h, send(openLabMsg{lab: next})
		}
	case key.Matches(k, h.keys.Experiment):
		if len(sel.Experiments) > 0 {
			return h, send(openExperimentMsg{name: sel.Experiments[0]})
		}
	}
	return h, nil
}

// send wraps a message as a command.
func send(msg tea.Msg) tea.Cmd { return func() tea.Msg { return msg } }

// roomy is when there is height for each lesson's summary under its title.
func (h homeModel) roomy() bool { return h.wide() && h.h >= 2*len(h.rows)+8 }

// wide is when the detail panel goes beside the list instead of below.
func (h homeModel) wide() bool { return h.w >= 110 }

func (h homeModel) View() string {
	st := h.styles
	var top []string
	top = append(top, st.Subtitle.Render(truncate("Leader election, locks, leases and fencing tokens, on a real etcd.", h.w)))
	if h.notice != "" {
		top = append(top, st.Warning.Render(wrap("! "+h.notice, h.w)))
	}
	top = append(top, h.continueLine(), "")

	listW := h.w
	if h.wide() {
		listW = min(max(h.w*60/100, 76), 90)
	}
	list := h.list(listW)
	var body string
	if h.wide() {
		detailW := h.w - listW - 3
		detail := h.detail(detailW, true)
		rows := max(lipgloss.Height(list), lipgloss.Height(detail))
		body = columns(rows, st.Muted.Render(" │ "), block{list, listW}, block{detail, detailW})
	} else {
		body = list + "\n\n" + h.detail(h.w, false)
	}
	out := strings.Join(top, "\n") + "\n" + body
	if h.etcdFailed && h.etcdInfo != "" {
		used := lipgloss.Height(out)
		if gap := h.h - used - 1; gap > 0 {
			out += strings.Repeat("\n", gap)
		} else {
			out += "\n"
		}
		out += st.Error.Render(wrap(h.etcdInfo, h.w))
	}
	return out
}

func (h homeModel) continueLine() string {
	st := h.styles
	if h.last.Lesson == "" {
		return st.Text.Render("New here? Start with lesson 1: press ") + st.Accent.Render("enter") +
			st.Text.Render(" to read it.")
	}
	l := h.course.Lesson(h.last.Lesson)
	s := fmt.Sprintf("Continue where you left off: %02d %s, page %d/%d", l.Number, l.Title, h.last.Page+1, len(l.Pages))
	return st.Accent.Render("c") + st.Text.Render(" "+truncate(s, h.w-2))
}

// statsHeader names the columns of the course map.
const statsHeader = "pages  quiz  labs"

// stats is a lesson's numbers in columns under statsHeader.
func (r lessonRow) stats() string {
	return fmt.Sprintf("%5s  %4s  %4s", fmt.Sprintf("%d/%d", r.pagesRead, len(r.lesson.Pages)), r.quiz, r.labs)
}

func (h homeModel) list(w int) string {
	st := h.styles
	statsW := lipgloss.Width(statsHeader)
	titleW := w - 2 - statsW - 2 // cursor, title, gap, stats
	var b strings.Builder
	b.WriteString(st.Muted.Render(spaces(w-statsW) + statsHeader))
	for i, r := range h.rows {
		l := r.lesson
		b.WriteByte('\n')
		mark := "  "
		if r.done {
			mark = "✓ "
		}
		cursor := "  "
		if i == h.cursor {
			cursor = "› "
		}
		left := truncate(fmt.Sprintf("%s%02d %s", mark, l.Number, l.Title), titleW)
		right := spaces(titleW-lipgloss.Width(left)+2) + r.stats()
		switch {
		case i == h.cursor:
			b.WriteString(st.Cursor.Render(cursor) + st.Selected.Render(left+right))
		case r.done:
			b.WriteString(cursor + st.Success.Render(left+right))
		default:
			b.WriteString(cursor + st.Text.Render(left) + st.Muted.Render(right))
		}
		if h.roomy() {
			b.WriteString("\n" + spaces(7) + st.Muted.Render(truncate(l.Summary, w-8)))
		}
	}
	return b.String()
}

// detail describes the selected lesson: summary and what it contains.
func (h homeModel) detail(w int, long bool) string {
	st := h.styles
	l := h.selected()
	if l == nil {
		return st.Muted.Render("This course has no lessons.")
	}
	var parts []string
	parts = append(parts, fmt.Sprintf("%d pages", len(l.Pages)))
	if l.Quiz != nil && len(l.QuizQuestions()) > 0 {
		parts = append(parts, fmt.Sprintf("quiz of %d (t)", len(l.QuizQuestions())))
	}
	if len(l.Labs) == 1 {
		parts = append(parts, "lab "+l.Labs[0]+" (l)")
	} else if len(l.Labs) > 1 {
		parts = append(parts, "labs "+strings.Join(l.Labs, ", ")+" (l: "+h.rows[h.cursor].nextLab+")")
	}
	if len(l.Experiments) > 0 {
		parts = append(parts, "experiment "+strings.Join(l.Experiments, ", ")+" (x)")
	}
	var b strings.Builder
	if long {
		b.WriteString(st.Heading.Render(truncate(fmt.Sprintf("%02d %s", l.Number, l.Title), w)) + "\n")
	}
	b.WriteString(st.Text.Render(wrap(l.Summary, w)) + "\n")
	b.WriteString(st.Muted.Render(wrap(strings.Join(parts, " · "), w)))
	if long && len(l.Objectives) > 0 {
		b.WriteString("\n\n" + st.Heading.Render("You will be able to") + "\n")
		for _, o := range l.Objectives {
			b.WriteString(st.Text.Render(hangIndent("• ", o, w)) + "\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// hangIndent wraps text after a bullet, indenting continuation lines.
func hangIndent(bullet, text string, w int) string {
	bw := lipgloss.Width(bullet)
	lines := strings.Split(wrap(text, max(w-bw, 10)), "\n")
	for i := range lines {
		if i == 0 {
			lines[i] = bullet + lines[i]
		} else {
			lines[i] = spaces(bw) + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

func (h homeModel) ShortHelp() []key.Binding {
	return []key.Binding{h.keys.nav.Up, h.keys.nav.Down, h.keys.Open, h.keys.Continue, h.keys.Quiz}
}

func (h homeModel) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{h.keys.nav.Up, h.keys.nav.Down, h.keys.nav.Top, h.keys.nav.Bottom},
		{h.keys.Open, h.keys.Continue, h.keys.Quiz, h.keys.Lab, h.keys.Experiment},
	}
}
