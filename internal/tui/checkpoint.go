package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/quiz"
)

func (r readerModel) checkOpen() bool { return r.check != nil }

func (r readerModel) typing() bool { return r.check != nil && r.check.typing() }

func (r *readerModel) openCheck(i int, q *quiz.Question) {
	qm := newQuestion(q, r.learner, r.styles)
	r.check, r.checkIdx = &qm, i
	r.refreshCheck()
	r.checkVP.GotoTop()
}

// refreshCheck puts the open checkpoint into its viewport.
func (r *readerModel) refreshCheck() {
	if r.check == nil {
		return
	}
	tw := r.textWidth()
	body := r.check.View(tw)
	if r.check.answered() {
		if e := r.check.q.Experiment; e != "" {
			body += "\n\n" + r.styles.Accent.Render("x") + r.styles.Text.Render(" runs the experiment "+e+" to see what really happens.")
		}
		body += "\n\n" + r.styles.Muted.Render("enter continues · esc back to the page")
	}
	r.checkVP.SetContent(body)
}

func (r readerModel) updateCheck(k tea.KeyPressMsg) (readerModel, tea.Cmd) {
	p := r.lesson.Pages[r.page]
	if r.check.answered() {
		switch {
		case key.Matches(k, r.keys.nav.Down):
			r.checkVP.ScrollDown(1)
		case key.Matches(k, r.keys.nav.Up):
			r.checkVP.ScrollUp(1)
		case key.Matches(k, r.keys.nav.PageDown):
			r.checkVP.PageDown()
		case key.Matches(k, r.keys.nav.PageUp):
			r.checkVP.PageUp()
		case key.Matches(k, r.keys.Experiment) && r.check.q.Experiment != "":
			return r, send(openExperimentMsg{name: r.check.q.Experiment})
		}
		if key.Matches(k, r.keys.Close) || key.Matches(k, r.check.keys.Submit) {
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
	q := qm.q
	if qm.result.Correct {
		r.answered[q.ID] = true
	}
	ans := progress.Answer{Response: responseText(q, *qm.response), Score: qm.result.Score, Correct: qm.result.Correct}
	return r, send(checkAnsweredMsg{lesson: r.lesson.ID, question: q.ID, answer: ans})
}
