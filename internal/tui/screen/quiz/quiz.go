// Package quiz is the quiz screen: a lesson's questions one at a time
// with feedback after each, the score at the end, and a retry of the
// missed ones. Its Question is the one question widget, which the reader
// uses for inline checkpoints too.
package quiz

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/review"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/internal/tui/text"
	"github.com/ownership-election/playground/internal/tui/theme"
	"github.com/ownership-election/playground/lessons"
	"github.com/ownership-election/playground/quiz"
)

// KeyMap is the quiz screen's bindings (answering a question has its own).
type KeyMap struct {
	Run    key.Binding // predict questions: run the experiment
	Next   key.Binding
	Retry  key.Binding
	Done   key.Binding
	Scroll key.Binding // pgup/pgdn over long feedback
	theme.NavKeys
}

// DefaultKeyMap returns the quiz screen's bindings.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Run:     key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "run the experiment")),
		Next:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "next question")),
		Retry:   key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "retry missed")),
		Done:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "course map")),
		Scroll:  key.NewBinding(key.WithKeys("pgup", "pgdown"), key.WithHelp("↑↓/pgdn", "scroll")),
		NavKeys: theme.DefaultNavKeys(),
	}
}

// graded is one answered question of the attempt.
type graded struct {
	answer progress.Answer
	result quiz.Result
}

// Model runs a lesson's quiz: one question at a time, feedback after
// each, a score at the end, and a retry of the missed questions only.
type Model struct {
	screen.Base
	keys    KeyMap
	learner string
	now     func() time.Time

	lesson    *lessons.Lesson
	questions []*quiz.Question // this round
	idx       int
	current   Question
	answers   map[string]graded // every question answered so far, latest wins
	round     int
	// record is this lesson's saved quiz history (first attempt, best
	// score), from the root's progress; nil before any attempt.
	record   *progress.Lesson
	finished bool
	vp       viewport.Model
	// review says the screen is a review session: questions from every
	// lesson, each answer recorded at once (Reviewed), no retry.
	review bool
	// shown is the option order each question was last shown in, so a
	// retry shows it in another.
	shown map[string][]int
}

// Options configure the quiz screen.
type Options struct {
	// Lesson is the lesson whose quiz the screen runs (it must have one).
	Lesson *lessons.Lesson
	// Review, when not empty, makes the screen a review session of these
	// questions instead (Lesson is then not used).
	Review []*quiz.Question
}

// New builds the quiz of opts.Lesson.
func New(ctx screen.Context, opts Options) *Model {
	q := &Model{Base: screen.NewBase(ctx), keys: DefaultKeyMap(), learner: ctx.Learner, now: time.Now, vp: viewport.New()}
	if len(opts.Review) > 0 {
		q.review = true
		opts.Lesson = reviewLesson(opts.Review)
	}
	q.start(opts.Lesson, nil)
	q.record = ctx.Progress.Peek(opts.Lesson.ID)
	return q
}

var _ screen.Screen = (*Model)(nil)

// SetStyles replaces the styles of the screen and its question.
func (q *Model) SetStyles(st theme.Styles) {
	q.Base.SetStyles(st)
	q.current.SetStyles(st)
	q.layout()
}

// Update handles a key; see update.
func (q *Model) Update(msg tea.Msg) (screen.Screen, tea.Cmd) {
	next, cmd := q.update(msg)
	*q = next
	return q, cmd
}

// SetSize gives the quiz its area.
func (q *Model) SetSize(w, h int) {
	q.Base.SetSize(w, h)
	q.vp.SetWidth(max(min(w, 100), 20))
	q.vp.SetHeight(max(h-2, 1))
	q.layout()
}

// start begins the quiz of l; only, when not nil, limits it to those
// question ids (a retry).
func (q *Model) start(l *lessons.Lesson, only []string) tea.Cmd {
	if q.lesson != l || only == nil {
		q.answers = map[string]graded{}
		q.shown = map[string][]int{}
		q.round = 0
	}
	q.lesson = l
	q.questions = q.questions[:0]
	for _, x := range l.QuizQuestions() {
		if only == nil || slices.Contains(only, x.ID) {
			q.questions = append(q.questions, x)
		}
	}
	q.round++
	q.finished = false
	q.idx = 0
	q.ask()
	return nil
}

func (q *Model) ask() {
	x := q.questions[q.idx]
	q.current = NewQuestionShown(x, q.display(x), q.Styles)
	q.shown[x.ID] = q.current.Display()
	q.vp.GotoTop()
	q.layout()
}

// layout refreshes the viewport's content after any change.
func (q *Model) layout() {
	if q.lesson == nil {
		return
	}
	var s string
	if q.finished {
		s = q.summary()
	} else {
		s = q.current.View(q.vp.Width())
		if q.current.Answered() {
			if e := q.current.Asked().Experiment; e != "" {
				s += "\n\n" + q.Styles.Accent.Render("x") + q.Styles.Text.Render(" runs the experiment "+e+" to see what really happens.")
			}
			next := "enter: next question"
			if q.idx == len(q.questions)-1 {
				next = "enter: see your score"
			}
			s += "\n\n" + q.Styles.Muted.Render(next)
		}
	}
	q.vp.SetContent(s)
}

// Typing reports whether the question takes a number, so ? and q are text.
func (q *Model) Typing() bool { return !q.finished && q.lesson != nil && q.current.Typing() }

func (q Model) update(msg tea.Msg) (Model, tea.Cmd) {
	if pc, ok := msg.(screen.ProgressChanged); ok && q.lesson != nil && !q.review {
		// A finished round is recorded by the root: show the history.
		q.record = pc.Progress.Peek(q.lesson.ID)
		if q.finished {
			q.layout()
		}
		return q, nil
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok || q.lesson == nil {
		return q, nil
	}
	switch {
	case key.Matches(k, q.keys.PageDown) && !q.Typing() && (q.finished || q.current.Answered()):
		q.vp.PageDown()
		return q, nil
	case key.Matches(k, q.keys.PageUp) && !q.Typing():
		q.vp.PageUp()
		return q, nil
	}
	if q.finished {
		switch {
		case key.Matches(k, q.keys.Retry):
			if missed := q.missed(); len(missed) > 0 && !q.review {
				return q, q.start(q.lesson, missed)
			}
		case key.Matches(k, q.keys.Done):
			return q, screen.Send(screen.Home{})
		case key.Matches(k, q.keys.Down):
			q.vp.ScrollDown(1)
		case key.Matches(k, q.keys.Up):
			q.vp.ScrollUp(1)
		}
		return q, nil
	}
	if q.current.Answered() {
		switch {
		case key.Matches(k, q.keys.Run) && q.current.Asked().Experiment != "":
			return q, screen.Send(screen.OpenExperiment{Name: q.current.Asked().Experiment})
		case key.Matches(k, q.keys.Next):
			if q.idx+1 < len(q.questions) {
				q.idx++
				q.ask()
				return q, nil
			}
			q.finished = true
			q.vp.GotoTop()
			q.layout()
			if q.review {
				return q, nil // each answer was recorded as it was given
			}
			return q, screen.Send(screen.QuizFinished{Lesson: q.lesson.ID, Result: q.result()})
		case key.Matches(k, q.keys.Down):
			q.vp.ScrollDown(1)
		case key.Matches(k, q.keys.Up):
			q.vp.ScrollUp(1)
		}
		return q, nil
	}
	cur, submitted := q.current.Update(k)
	q.current = cur
	if !submitted {
		q.layout()
		return q, nil
	}
	q.answers[cur.Asked().ID] = graded{answer: cur.Answer(), result: *cur.Result()}
	q.layout()
	// Keep the end of the feedback (the takeaway) reachable at once on
	// short screens by starting at the verdict line.
	q.vp.GotoTop()
	if q.review {
		return q, screen.Send(screen.Reviewed{Question: cur.Asked().ID, Right: cur.Result().Correct})
	}
	return q, nil
}

// missed lists the questions of the whole quiz not answered fully right.
func (q Model) missed() []string {
	var ids []string
	for _, x := range q.lesson.QuizQuestions() {
		if g, ok := q.answers[x.ID]; !ok || !g.result.Correct {
			ids = append(ids, x.ID)
		}
	}
	return ids
}

// score is the sum of the scores over the whole quiz.
func (q Model) score() float64 {
	s := 0.0
	for _, g := range q.answers {
		s += g.result.Score
	}
	return s
}

func (q Model) result() progress.QuizResult {
	r := progress.QuizResult{QuizID: q.lesson.Quiz.ID, Answers: map[string]progress.Answer{},
		Total: len(q.lesson.QuizQuestions()), Finished: q.now()}
	for _, x := range q.lesson.QuizQuestions() {
		g, ok := q.answers[x.ID]
		if !ok {
			continue
		}
		a := g.answer
		a.At = r.Finished
		r.Answers[x.ID] = a
		r.Score += g.result.Score
	}
	return r
}

func (q Model) summary() string {
	st := q.Styles
	total := len(q.lesson.QuizQuestions())
	var b strings.Builder
	score := q.score()
	b.WriteString(st.Heading.Render("Your score") + "\n\n")
	line := fmt.Sprintf("%s / %d  (%d%%)", trimFloat(score), total, int(score/float64(total)*100+0.5))
	if score == float64(total) {
		b.WriteString(st.Success.Render("✓ "+line+": every question right.") + "\n\n")
	} else {
		b.WriteString(st.Text.Render(line) + "\n\n")
	}
	if r := q.record; r != nil && r.FirstQuiz != nil && r.Attempts > 1 {
		// A retry does not hide how the first attempt went.
		b.WriteString(st.Muted.Render(fmt.Sprintf("Best %d%% · first attempt %d%% · %d attempts",
			int(r.BestQuiz*100+0.5), int(r.FirstQuiz.Share()*100+0.5), r.Attempts)) + "\n\n")
	}
	w := q.vp.Width()
	for i, x := range q.lesson.QuizQuestions() {
		g, ok := q.answers[x.ID]
		mark, style := "·", st.Muted
		switch {
		case ok && g.result.Correct:
			mark, style = "✓", st.Success
		case ok && g.result.Score > 0:
			mark, style = "◐", st.Warning
		case ok:
			mark, style = "✗", st.Error
		}
		// One line per question: the prompt cut with an ellipsis.
		prefix := fmt.Sprintf("%s %d. ", mark, i+1)
		b.WriteString(style.Render(prefix+text.Clamp(text.Inline(x.Prompt), w-ansi.StringWidth(prefix), 1)[0]) + "\n")
	}
	b.WriteString("\n")
	switch n := len(q.missed()); {
	case q.review && n > 0:
		b.WriteString(st.Text.Render(fmt.Sprintf("The %d you missed come back in %s; the others later. ", n, waitText(review.Intervals[0]))))
	case q.review:
		b.WriteString(st.Text.Render("Each one moves up a box: it comes back later. "))
	case n > 0:
		b.WriteString(st.Accent.Render("r") + st.Text.Render(fmt.Sprintf(" retries the %d you missed · ", n)))
	}
	b.WriteString(st.Accent.Render("enter") + st.Text.Render(" goes to the course map, ") + st.Accent.Render("esc") + st.Text.Render(" back"))
	return b.String()
}

func trimFloat(x float64) string {
	s := fmt.Sprintf("%.2f", x)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

// Title is the quiz's name, and which retry this is.
func (q *Model) Title() string {
	if q.lesson == nil {
		return "Quiz"
	}
	t := "Quiz: " + q.lesson.Title
	if q.review {
		return fmt.Sprintf("Review: %d question%s you missed before", len(q.questions), plural(len(q.questions)))
	}
	if q.lesson.Quiz.Title != "" {
		t = "Quiz: " + q.lesson.Quiz.Title
	}
	if q.round > 1 {
		t += fmt.Sprintf(" (retry %d)", q.round-1)
	}
	return t
}

// Status is the question number and its kind, or the score.
func (q *Model) Status() string {
	if q.lesson == nil {
		return ""
	}
	if q.finished {
		return fmt.Sprintf("score %s/%d", trimFloat(q.score()), len(q.lesson.QuizQuestions()))
	}
	return fmt.Sprintf("question %d/%d · %s", q.idx+1, len(q.questions), q.questions[q.idx].Kind.Instruction())
}

// View draws the current question or the score.
func (q *Model) View() string {
	if q.lesson == nil {
		return ""
	}
	st := q.Styles
	var head string
	if q.finished {
		head = st.Badge.Render("Finished")
	} else {
		head = st.Badge.Render(fmt.Sprintf("Question %d of %d", q.idx+1, len(q.questions))) +
			st.Muted.Render(" · "+q.questions[q.idx].Kind.Instruction())
	}
	return text.Truncate(head, q.Width) + "\n\n" + q.vp.View()
}

// ShortHelp is the one-line key help.
func (q *Model) ShortHelp() []key.Binding {
	switch {
	case q.lesson == nil:
		return nil
	case q.finished && q.canRetry():
		return []key.Binding{q.keys.Retry, q.keys.Done}
	case q.finished:
		return []key.Binding{q.keys.Done}
	case q.current.Answered():
		next := q.keys.Next
		if q.idx == len(q.questions)-1 {
			next.SetHelp("enter", "see score")
		}
		if q.current.Asked().Experiment != "" {
			return []key.Binding{next, q.keys.Run, q.keys.Scroll}
		}
		return []key.Binding{next, q.keys.Scroll}
	}
	return q.current.ShortHelp()
}

// FullHelp is every key of the quiz.
func (q *Model) FullHelp() [][]key.Binding {
	groups := [][]key.Binding{{q.keys.Next, q.keys.Scroll}}
	if q.finished && q.canRetry() {
		groups[0] = append(groups[0], q.keys.Retry)
	}
	if q.lesson != nil && !q.finished {
		groups = append(q.current.FullHelp(), groups...)
	}
	return groups
}

// Current is the question being asked.
func (q *Model) Current() Question { return q.current }
