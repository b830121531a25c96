// Package home is the course map: every lesson with the learner's
// progress (pages read, best quiz score, labs passed), where to continue,
// and keys to open a lesson, its quiz, its lab or its experiment.
package home

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/internal/tui/text"
	"github.com/ownership-election/playground/internal/tui/theme"
	"github.com/ownership-election/playground/lessons"
)

// KeyMap is the course map's bindings.
type KeyMap struct {
	theme.NavKeys
	Open       key.Binding
	Continue   key.Binding
	Quiz       key.Binding
	Lab        key.Binding
	Experiment key.Binding
	Review     key.Binding
}

// DefaultKeyMap returns the course map's bindings.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		NavKeys:    theme.DefaultNavKeys(),
		Open:       key.NewBinding(key.WithKeys("enter", "right"), key.WithHelp("enter", "read lesson")),
		Continue:   key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "continue")),
		Quiz:       key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "quiz")),
		Lab:        key.NewBinding(key.WithKeys("l"), key.WithHelp("l", "lab")),
		Experiment: key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "experiment")),
		Review:     key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "review missed")),
	}
}

// lessonRow is what the course map shows about one lesson.
type lessonRow struct {
	lesson    *lessons.Lesson
	pagesRead int
	quiz      string // best score "80%", "–" before any attempt, "" without a quiz
	firstQuiz string // the first attempt's score when the best is higher, else ""
	labs      string // passed/all "1/2", "" when the lesson has none
	nextLab   string // what l opens: the first lab not passed yet, else the first
	done      bool   // every page read, quiz full marks, every lab passed
}

// Model is the course map.
type Model struct {
	screen.Base
	course *lessons.Course
	keys   KeyMap

	progress *progress.Progress // the learner's, owned by the root
	now      func() time.Time

	rows   []lessonRow
	cursor int // index into rows

	// choosing lists the experiments of the selected lesson when it has
	// several: a number opens one, esc or any other key closes the list.
	choosing []string
	// choosingLabs lists the labs of the selected lesson when it has
	// several, the same way.
	choosingLabs []string

	last       progress.Position // where to continue; empty Lesson when new
	notice     string            // e.g. the progress file was corrupt
	etcdInfo   string
	etcdFailed bool // the status line cannot hold the reason and log path
}

// Options configure the course map.
type Options struct {
	// Notice is shown above the map (for example that the progress file
	// could not be read) until the program ends.
	Notice string
	// Now is the clock that says which questions are due for review;
	// nil means time.Now.
	Now func() time.Time
}

// New builds the map of ctx.Course.
func New(ctx screen.Context, opts Options) *Model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	h := &Model{Base: screen.NewBase(ctx), course: ctx.Course, keys: DefaultKeyMap(), notice: opts.Notice, progress: ctx.Progress, now: opts.Now}
	h.refresh(ctx.Progress)
	return h
}

var _ screen.Screen = (*Model)(nil)

// Title is the program's name.
func (h *Model) Title() string { return "Ownership election playground" }

// Capturing is true while the experiment or lab chooser is open: esc closes it.
func (h *Model) Capturing() bool { return h.choosing != nil || h.choosingLabs != nil }

// Update moves the cursor and opens what the keys ask for; progress and
// etcd news refresh the map.
func (h *Model) Update(msg tea.Msg) (screen.Screen, tea.Cmd) {
	switch msg := msg.(type) {
	case screen.ProgressChanged:
		h.progress = msg.Progress
		h.refresh(msg.Progress)
		return h, nil
	case screen.CourseLoaded:
		h.course = msg.Course
		if msg.Problems > 0 && h.notice == "" {
			h.notice = fmt.Sprintf("the course has %d problem(s); run playground check for the list", msg.Problems)
		}
		h.refresh(h.progress)
		return h, nil
	case screen.EtcdStatus:
		h.etcdInfo, h.etcdFailed = msg.Detail, msg.Failed
		return h, nil
	}
	next, cmd := h.update(msg)
	*h = next
	return h, cmd
}

// refresh recomputes the rows from progress.
func (h *Model) refresh(p *progress.Progress) {
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
			r.firstQuiz = firstScore(rec)
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

func (h Model) selected() *lessons.Lesson {
	if h.cursor < 0 || h.cursor >= len(h.rows) {
		return nil
	}
	return h.rows[h.cursor].lesson
}

func (h Model) update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok || len(h.rows) == 0 {
		return h, nil
	}
	sel := h.selected()
	if h.choosingLabs != nil {
		return h, h.chooseLab(k)
	}
	if h.choosing != nil {
		names := h.choosing
		h.choosing = nil
		if n := int(k.Code - '1'); len(k.Text) == 1 && n >= 0 && n < len(names) {
			return h, screen.Send(screen.OpenExperiment{Name: names[n]})
		}
		return h, nil
	}
	switch {
	case key.Matches(k, h.keys.Up):
		h.cursor = max(h.cursor-1, 0)
	case key.Matches(k, h.keys.Down):
		h.cursor = min(h.cursor+1, len(h.rows)-1)
	case key.Matches(k, h.keys.Top):
		h.cursor = 0
	case key.Matches(k, h.keys.Bottom):
		h.cursor = len(h.rows) - 1
	case k.Text >= "1" && k.Text <= "9" && len(k.Text) == 1:
		if i := int(k.Text[0] - '1'); i < len(h.rows) {
			h.cursor = i
		}
	case key.Matches(k, h.keys.Open):
		return h, screen.Send(screen.OpenLesson{Lesson: sel.ID, Page: -1})
	case key.Matches(k, h.keys.Continue):
		l, page, _ := h.nextUnread()
		return h, screen.Send(screen.OpenLesson{Lesson: l.ID, Page: page})
	case key.Matches(k, h.keys.Quiz):
		return h, screen.Send(screen.OpenQuiz{Lesson: sel.ID})
	case key.Matches(k, h.keys.Review):
		return h, screen.Send(screen.OpenReview{})
	case key.Matches(k, h.keys.Lab):
		return h, h.labKey(sel)
	case key.Matches(k, h.keys.Experiment):
		switch {
		case len(sel.Experiments) == 1:
			return h, screen.Send(screen.OpenExperiment{Name: sel.Experiments[0]})
		case len(sel.Experiments) > 1:
			h.choosing = sel.Experiments
		}
	}
	return h, nil
}

// roomy is when there is height for each lesson's summary under its title.
func (h Model) roomy() bool { return h.wide() && h.Height >= 2*len(h.rows)+8 }

// wide is when the detail panel goes beside the list instead of below.
func (h Model) wide() bool { return h.Width >= 110 }

// View draws the map.
func (h *Model) View() string {
	st := h.Styles
	var top []string
	top = append(top, st.Subtitle.Render(text.Truncate("Leader election, locks, leases and fencing tokens, on a real etcd.", h.Width)))
	if h.notice != "" {
		top = append(top, st.Warning.Render(text.Wrap("! "+h.notice, h.Width)))
	}
	top = append(top, h.continueLine())

	listW := h.Width
	if h.wide() {
		listW = min(max(h.Width*60/100, 76), 90)
	}
	var body string
	if h.wide() {
		list := h.list(listW, 0, len(h.rows))
		detailW := h.Width - listW - 3
		detail := h.detail(detailW, true)
		rows := max(lipgloss.Height(list), lipgloss.Height(detail))
		body = "\n" + text.Columns(rows, st.Muted.Render(" │ "), text.Block{Text: list, W: listW}, text.Block{Text: detail, W: detailW})
	} else {
		body = h.narrowBody(lipgloss.Height(strings.Join(top, "\n")))
	}
	out := strings.Join(top, "\n") + "\n" + body
	if h.etcdFailed && h.etcdInfo != "" {
		used := lipgloss.Height(out)
		if gap := h.Height - used - 1; gap > 0 {
			out += strings.Repeat("\n", gap)
		} else {
			out += "\n"
		}
		out += st.Error.Render(text.Wrap(h.etcdInfo, h.Width))
	}
	return out
}

func (h Model) continueLine() string {
	st := h.Styles
	if h.last.Lesson == "" {
		return st.Text.Render("New here? Start with lesson 1: press ") + st.Accent.Render("enter") +
			st.Text.Render(" to read it.")
	}
	l, page, unread := h.nextUnread()
	s := fmt.Sprintf("Continue: %02d %s, page %d/%d (next unread)", l.Number, l.Title, page+1, len(l.Pages))
	if !unread {
		s = fmt.Sprintf("Continue where you left off: %02d %s, page %d/%d", l.Number, l.Title, page+1, len(l.Pages))
	}
	return st.Accent.Render("c") + st.Text.Render(" "+text.Truncate(s, h.Width-2))
}

// stats is a lesson's numbers in the columns list names, the quiz's
// quizW wide. Pages are aligned on the slash, so a lesson of ten pages or
// more ("0/10") does not shift its numbers left of the others' ("0/7").
func (r lessonRow) stats(quizW int, roomy bool) string {
	return fmt.Sprintf("%5s  %*s  %4s", fmt.Sprintf("%2d/%-2d", r.pagesRead, len(r.lesson.Pages)), quizW, r.quizCell(roomy), r.labs)
}

// narrowBody is the list with the selected lesson's detail (or the list
// of its labs or experiments to choose from) under it, in the lines the
// top's used lines leave: the blank lines go first when they do not all
// fit, then the rows furthest from the cursor, so the detail is never
// cut (at 80x24 the 13 lessons left it three lines, too few for a
// lesson's three labs).
func (h Model) narrowBody(used int) string {
	detail := h.detail(h.Width, false)
	room := h.Height - used - lipgloss.Height(detail) - 1 // the list's header
	gaps := []string{"\n", "\n"}                          // before the list, and before the detail
	for i := range gaps {
		if room < len(h.rows)+len(gaps)-i {
			gaps[i] = ""
		}
	}
	room -= strings.Count(strings.Join(gaps, ""), "\n")
	first, n := rowWindow(len(h.rows), h.cursor, max(room, 1))
	return gaps[0] + h.list(h.Width, first, n) + "\n" + gaps[1] + detail
}

// rowWindow is the rows a list of n shows in room lines: all of them, or
// room rows around the cursor.
func rowWindow(n, cursor, room int) (first, count int) {
	if n <= room {
		return 0, n
	}
	first = min(max(cursor-room/2, 0), n-room)
	return first, room
}

// list is the header and rows first..first+n-1 of the course map.
func (h Model) list(w, first, n int) string {
	st := h.Styles
	roomyQuiz := w >= 90
	quizW := h.quizWidth(roomyQuiz)
	header := fmt.Sprintf("pages  %*s  labs", quizW, "quiz")
	statsW := lipgloss.Width(header)
	titleW := w - 2 - statsW - 2 // cursor, title, gap, stats
	var b strings.Builder
	if rh := h.reviewHeader(w - statsW); rh != "" {
		b.WriteString(rh + st.Muted.Render(header))
	} else {
		b.WriteString(st.Muted.Render(text.Spaces(w-statsW) + header))
	}
	for i, r := range h.rows {
		if i < first || i >= first+n {
			continue
		}
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
		left := text.Truncate(fmt.Sprintf("%s%02d %s", mark, l.Number, l.Title), titleW)
		right := text.Spaces(titleW-lipgloss.Width(left)+2) + r.stats(quizW, roomyQuiz)
		switch {
		case i == h.cursor:
			b.WriteString(st.Cursor.Render(cursor) + st.Selected.Render(left+right))
		case r.done:
			b.WriteString(cursor + st.Success.Render(left+right))
		default:
			b.WriteString(cursor + st.Text.Render(left) + st.Muted.Render(right))
		}
		if h.roomy() {
			b.WriteString("\n" + text.Spaces(7) + st.Muted.Render(text.Truncate(l.Summary, w-8)))
		}
	}
	return b.String()
}

// detail describes the selected lesson: summary and what it contains.
func (h Model) detail(w int, long bool) string {
	if h.choosing != nil {
		return h.chooser(w)
	}
	if h.choosingLabs != nil {
		return h.labChooser(w)
	}
	st := h.Styles
	l := h.selected()
	if l == nil {
		return st.Muted.Render("This course has no lessons.")
	}
	var parts []string
	parts = append(parts, fmt.Sprintf("%d pages", len(l.Pages)))
	if l.Quiz != nil && len(l.QuizQuestions()) > 0 {
		parts = append(parts, fmt.Sprintf("quiz of %d (t)", len(l.QuizQuestions())))
	}
	switch {
	case len(l.Labs) == 1 && h.labTitle(l.Labs[0]) != "":
		parts = append(parts, h.course.LabName(l.Labs[0])+" "+h.labTitle(l.Labs[0])+" (l)")
	case len(l.Labs) == 1:
		parts = append(parts, h.course.LabName(l.Labs[0])+" (l)")
	case len(l.Labs) > 1:
		parts = append(parts, "labs "+h.labNumbers(l.Labs)+" (l chooses)")
	}
	if len(l.Experiments) > 0 {
		if len(l.Experiments) == 1 {
			parts = append(parts, "experiment "+l.Experiments[0]+" (x)")
		} else {
			parts = append(parts, "experiments "+strings.Join(l.Experiments, ", ")+" (x chooses)")
		}
	}
	var b strings.Builder
	if long {
		b.WriteString(st.Heading.Render(text.Truncate(fmt.Sprintf("%02d %s", l.Number, l.Title), w)) + "\n")
	}
	b.WriteString(st.Text.Render(text.Wrap(l.Summary, w)) + "\n")
	b.WriteString(st.Muted.Render(text.Wrap(strings.Join(parts, " · "), w)))
	if long && len(l.Objectives) > 0 {
		b.WriteString("\n\n" + st.Heading.Render("You will be able to") + "\n")
		for _, o := range l.Objectives {
			b.WriteString(st.Text.Render(text.Hang("• ", o, w)) + "\n")
		}
	}
	if list := h.labList(l, w); long && list != "" {
		b.WriteString("\n" + list)
	}
	return strings.TrimRight(b.String(), "\n")
}

// ShortHelp is the one-line key help.
//
// The arrows are left to the full help so that, with the global keys
// (progress, help, quit), the line fits 80 columns.
func (h *Model) ShortHelp() []key.Binding {
	if h.Capturing() {
		return h.chooserHelp()
	}
	return []key.Binding{h.keys.Open, h.keys.Continue, h.keys.Quiz, h.keys.Lab}
}

// FullHelp is every key of the map.
func (h *Model) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{h.keys.Up, h.keys.Down, h.keys.Top, h.keys.Bottom},
		{h.keys.Open, h.keys.Continue, h.keys.Quiz, h.keys.Lab, h.keys.Experiment, h.keys.Review},
	}
}

// chooser lists the selected lesson's experiments to pick one by number.
func (h *Model) chooser(w int) string {
	st := h.Styles
	var b strings.Builder
	b.WriteString(st.Heading.Render("Which experiment?") + "\n")
	for i, name := range h.choosing {
		line := fmt.Sprintf("%d  %s", i+1, name)
		if sc := h.course.ExperimentTitle(name); sc != "" {
			line += " · " + sc
		}
		b.WriteString(st.Accent.Render(fmt.Sprint(i+1)) + st.Text.Render(text.Truncate(line[len(fmt.Sprint(i+1)):], w-1)) + "\n")
	}
	b.WriteString(st.Muted.Render("press its number · esc closes this list"))
	return b.String()
}
