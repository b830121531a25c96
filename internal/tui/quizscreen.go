package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/tui/theme"
	"github.com/ownership-election/playground/lessons"
	"github.com/ownership-election/playground/quiz"
)

type quizKeys struct {
	Run    key.Binding // predict questions: run the experiment
	Next   key.Binding
	Retry  key.Binding
	Done   key.Binding
	Scroll key.Binding // pgup/pgdn over long feedback
	nav    theme.NavKeys
}

func defaultQuizKeys() quizKeys {
	return quizKeys{
		Run:    key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "run the experiment")),
		Next:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "next question")),
		Retry:  key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "retry missed")),
		Done:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "back to the course")),
		Scroll: key.NewBinding(key.WithKeys("pgup", "pgdown"), key.WithHelp("↑↓/pgdn", "scroll")),
		nav:    theme.DefaultNavKeys(),
	}
}

// graded is one answered question of the attempt.
type graded struct {
	response quiz.Response
	result   quiz.Result
}

// quizModel runs a lesson's quiz: one question at a time, feedback after
// each, a score at the end, and a retry of the missed questions only.
type quizModel struct {
	styles  theme.Styles
	keys    quizKeys
	learner string
	now     func() time.Time
	w, h    int

	lesson    *lessons.Lesson
	questions []*quiz.Question // this round
	idx       int
	current   questionModel
	answers   map[string]graded // every question answered so far, latest wins
	round     int
	finished  bool
	vp        viewport.Model
}

func newQuiz(st theme.Styles, learner string) quizModel {
	return quizModel{styles: st, keys: defaultQuizKeys(), learner: learner, now: time.Now, vp: viewport.New()}
}

func (q *quizModel) setStyles(st theme.Styles) {
	q.styles = st
	q.current.styles = st
	q.layout()
}

func (q *quizModel) setSize(w, h int) {
	q.w, q.h = w, h
	q.vp.SetWidth(max(min(w, 100), 20))
	q.vp.SetHeight(max(h-2, 1))
	q.layout()
}

// start begins the quiz of l; only, when not nil, limits it to those
// question ids (a retry).
func (q *quizModel) start(l *lessons.Lesson, only []string) tea.Cmd {
	if q.lesson != l || only == nil {
		q.answers = map[string]graded{}
		q.round = 0
	}
	q.lesson = l
	q.questions = q.questions[:0]
	for _, x := range l.QuizQuestions() {
		if only == nil || contains(only, x.ID) {
			q.questions = append(q.questions, x)
		}
	}
	q.round++
	q.finished = false
	q.idx = 0
	q.ask()
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (q *quizModel) ask() {
	q.current = newQuestion(q.questions[q.idx], q.learner, q.styles)
	q.vp.GotoTop()
	q.layout()
}

// layout refreshes the viewport's content after any change.
func (q *quizModel) layout() {
	if q.lesson == nil {
		return
	}
	var s string
	if q.finished {
		s = q.summary()
	} else {
		s = q.current.View(q.vp.Width())
		if q.current.answered() {
			if e := q.current.q.Experiment; e != "" {
				s += "\n\n" + q.styles.Accent.Render("x") + q.styles.Text.Render(" runs the experiment "+e+" to see what really happens.")
			}
			next := "enter: next question"
			if q.idx == len(q.questions)-1 {
				next = "enter: see your score"
			}
			s += "\n\n" + q.styles.Muted.Render(next)
		}
	}
	q.vp.SetContent(s)
}

func (q *quizModel) typing() bool { return !q.finished && q.lesson != nil && q.current.typing() }

func (q quizModel) Update(msg tea.Msg) (quizModel, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok || q.lesson == nil {
		return q, nil
	}
	switch {
	case key.Matches(k, q.keys.nav.PageDown) && !q.typing() && (q.finished || q.current.answered()):
		q.vp.PageDown()
		return q, nil
	case key.Matches(k, q.keys.nav.PageUp) && !q.typing():
		q.vp.PageUp()
		return q, nil
	}
	if q.finished {
		switch {
		case key.Matches(k, q.keys.Retry):
			if missed := q.missed(); len(missed) > 0 {
				return q, q.start(q.lesson, missed)
			}
		case key.Matches(k, q.keys.Done):
			return q, send(backMsg{})
		case key.Matches(k, q.keys.nav.Down):
			q.vp.ScrollDown(1)
		case key.Matches(k, q.keys.nav.Up):
			q.vp.ScrollUp(1)
		}
		return q, nil
	}
	if q.current.answered() {
		switch {
		case key.Matches(k, q.keys.Run) && q.current.q.Experiment != "":
			return q, send(openExperimentMsg{name: q.current.q.Experiment})
		case key.Matches(k, q.keys.Next):
			if q.idx+1 < len(q.questions) {
				q.idx++
				q.ask()
				return q, nil
			}
			q.finished = true
			q.vp.GotoTop()
			q.layout()
			return q, send(quizFinishedMsg{lesson: q.lesson.ID, result: q.result()})
		case key.Matches(k, q.keys.nav.Down):
			q.vp.ScrollDown(1)
		case key.Matches(k, q.keys.nav.Up):
			q.vp.ScrollUp(1)
		}
		return q, nil
	}
	cur, submitted := q.current.Update(k)
	q.current = cur
	if submitted {
		q.answers[cur.q.ID] = graded{response: *cur.response, result: *cur.result}
	}
	q.layout()
	if submitted {
		// Keep the end of the feedback (the takeaway) reachable at once
		// on short screens by starting at the verdict line.
		q.vp.GotoTop()
	}
	return q, nil
}

// missed lists the questions of the whole quiz not answered fully right.
func (q quizModel) missed() []string {
	var ids []string
	for _, x := range q.lesson.QuizQuestions() {
		if g, ok := q.answers[x.ID]; !ok || !g.result.Correct {
			ids = append(ids, x.ID)
		}
	}
	return ids
}

// score is the sum of the scores over the whole quiz.
func (q quizModel) score() float64 {
	s := 0.0
	for _, g := range q.answers {
		s += g.result.Score
	}
	return s
}

func (q quizModel) result() progress.QuizResult {
	r := progress.QuizResult{QuizID: q.lesson.Quiz.ID, Answers: map[string]progress.Answer{},
		Total: len(q.lesson.QuizQuestions()), Finished: q.now()}
	for _, x := range q.lesson.QuizQuestions() {
		g, ok := q.answers[x.ID]
		if !ok {
			continue
		}
		r.Answers[x.ID] = progress.Answer{Response: responseText(x, g.response), Score: g.result.Score,
			Correct: g.result.Correct, At: r.Finished}
		r.Score += g.result.Score
	}
	return r
}

func (q quizModel) summary() string {
	st := q.styles
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
		b.WriteString(style.Render(hangIndent(fmt.Sprintf("%s %d. ", mark, i+1), firstLine(strings.TrimSpace(x.Prompt)), w)) + "\n")
	}
	b.WriteString("\n")
	if len(q.missed()) > 0 {
		b.WriteString(st.Accent.Render("r") + st.Text.Render(fmt.Sprintf(" retries the %d you missed · ", len(q.missed()))))
	}
	b.WriteString(st.Accent.Render("enter") + st.Text.Render(" goes back"))
	return b.String()
}

func trimFloat(x float64) string {
	s := fmt.Sprintf("%.2f", x)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

func (q quizModel) title() string {
	if q.lesson == nil {
		return "Quiz"
	}
	t := "Quiz: " + q.lesson.Title
	if q.lesson.Quiz.Title != "" {
		t = "Quiz: " + q.lesson.Quiz.Title
	}
	if q.round > 1 {
		t += fmt.Sprintf(" (retry %d)", q.round-1)
	}
	return t
}

func (q quizModel) position() string {
	if q.lesson == nil {
		return ""
	}
	if q.finished {
		return fmt.Sprintf("score %s/%d", trimFloat(q.score()), len(q.lesson.QuizQuestions()))
	}
	return fmt.Sprintf("question %d/%d · %s", q.idx+1, len(q.questions), kindLabel(q.questions[q.idx].Kind))
}

func kindLabel(k quiz.Kind) string {
	switch k {
	case quiz.Multi:
		return "select all that apply"
	case quiz.Numeric:
		return "type a number"
	case quiz.Order:
		return "put in order"
	case quiz.Predict:
		return "predict the outcome"
	}
	return "choose one"
}

func (q quizModel) View() string {
	if q.lesson == nil {
		return ""
	}
	st := q.styles
	var head string
	if q.finished {
		head = st.Badge.Render("Finished")
	} else {
		head = st.Badge.Render(fmt.Sprintf("Question %d of %d", q.idx+1, len(q.questions))) +
			st.Muted.Render(" · "+kindLabel(q.questions[q.idx].Kind))
	}
	return truncate(head, q.w) + "\n\n" + q.vp.View()
}

func (q quizModel) ShortHelp() []key.Binding {
	switch {
	case q.lesson == nil:
		return nil
	case q.finished:
		return []key.Binding{q.keys.Retry, q.keys.Done}
	case q.current.answered():
		next := q.keys.Next
		if q.idx == len(q.questions)-1 {
			next.SetHelp("enter", "see score")
		}
		if q.current.q.Experiment != "" {
			return []key.Binding{next, q.keys.Run, q.keys.Scroll}
		}
		return []key.Binding{next, q.keys.Scroll}
	}
	return q.current.ShortHelp()
}

func (q quizModel) FullHelp() [][]key.Binding {
	groups := [][]key.Binding{{q.keys.Next, q.keys.Retry, q.keys.Scroll}}
	if q.lesson != nil && !q.finished {
		groups = append(q.current.FullHelp(), groups...)
	}
	return groups
}
