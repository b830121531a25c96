package reader

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/tui/screen"
	quizscreen "github.com/ownership-election/playground/internal/tui/screen/quiz"
	"github.com/ownership-election/playground/quiz"
)

func (r *Model) openCheck(i int, q *quiz.Question) {
	qm := quizscreen.NewQuestion(q, r.learner, r.Styles)
	r.check, r.checkIdx = &qm, i
	r.refreshCheck()
	r.checkVP.GotoTop()
}

// refreshCheck puts the open checkpoint into its viewport.
func (r *Model) refreshCheck() {
	if r.check == nil {
		return
	}
	tw := r.textWidth()
	body := r.check.View(tw)
	if r.check.Answered() {
		if e := r.check.Asked().Experiment; e != "" {
			body += "\n\n" + r.Styles.Accent.Render("x") + r.Styles.Text.Render(" runs the experiment "+e+" to see what really happens.")
		}
		body += "\n\n" + r.Styles.Muted.Render("enter continues · esc back to the page")
	}
	r.checkVP.SetContent(body)
}

func (r Model) updateCheck(k tea.KeyPressMsg) (Model, tea.Cmd) {
	p := r.lesson.Pages[r.page]
	if r.check.Answered() {
		switch {
		case r.keys.Scroll(&r.checkVP, k):
		case key.Matches(k, r.keys.Experiment) && r.check.Asked().Experiment != "":
			return r, screen.Send(screen.OpenExperiment{Name: r.check.Asked().Experiment})
		}
		if key.Matches(k, r.keys.Close) || r.check.IsSubmit(k) {
			// Next checkpoint of the page, or back to the text.
			for i := r.checkIdx + 1; i < len(p.Checks); i++ {
				if q := r.question(p.Checks[i]); q != nil {
					r.openCheck(i, q)
					return r, nil
				}
			}
			r.check = nil
			r.shown = renderKey{}
			r.refreshContent()
		}
		return r, nil
	}
	if key.Matches(k, r.keys.Close) {
		r.check = nil
		return r, nil
	}
	qm, submitted := r.check.Update(k)
	r.check = &qm
	r.refreshCheck()
	if !submitted {
		return r, nil
	}
	r.checkVP.GotoTop()
	q := qm.Asked()
	ans := qm.Answer()
	r.answered[q.ID] = ans
	return r, screen.Send(screen.CheckAnswered{Lesson: r.lesson.ID, Question: q.ID, Answer: ans})
}
