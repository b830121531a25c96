package home

import (
	"fmt"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/tui/text"
)

// firstScore is the first attempt's score when a later one did better
// ("57%"), so the map can show the way from one to the other; "" when
// the first attempt was the best.
func firstScore(rec *progress.Lesson) string {
	if rec.FirstQuiz == nil || rec.Attempts < 2 {
		return ""
	}
	first := int(rec.FirstQuiz.Share()*100 + 0.5)
	if first >= int(rec.BestQuiz*100+0.5) {
		return ""
	}
	return fmt.Sprintf("%d%%", first)
}

// quizCell is the quiz column of a row: the best score, after the first
// one when that was lower: "57% → 100%", or "57→100%" when room is short.
func (r lessonRow) quizCell(roomy bool) string {
	switch {
	case r.firstQuiz == "":
		return r.quiz
	case roomy:
		return r.firstQuiz + " → " + r.quiz
	}
	return r.firstQuiz[:len(r.firstQuiz)-1] + "→" + r.quiz
}

// quizWidth is the quiz column's width: its heading's, or the widest cell.
func (h Model) quizWidth(roomy bool) int {
	w := len("quiz")
	for _, r := range h.rows {
		w = max(w, ansi.StringWidth(r.quizCell(roomy)))
	}
	return w
}

// dueCount is how many questions the course still has are due for
// review: its own, and the predictions of its experiments.
func (h Model) dueCount(now time.Time) int {
	n := 0
	for _, id := range h.progress.DueForReview(now) {
		if q, _ := h.course.Question(id); q != nil || h.progress.PredictionDue(id) {
			n++
		}
	}
	return n
}

// reviewHeader is the left part of the map's column heading, w cells: the
// review of missed questions, "r Review (3 due)", or when the next one
// comes back; "" before anything was missed.
func (h Model) reviewHeader(w int) string {
	st := h.Styles
	now := h.now()
	if n := h.dueCount(now); n > 0 {
		label := text.Truncate(fmt.Sprintf(" Review (%d due)", n), max(w-3, 0))
		return "  " + st.Accent.Render("r") + st.Text.Render(label) + text.Spaces(w-3-ansi.StringWidth(label))
	}
	next, ok := h.progress.NextReview(now)
	if !ok {
		return ""
	}
	label := text.Truncate("  Review: next in "+wait(next.Sub(now)), w)
	return st.Muted.Render(label) + text.Spaces(w-ansi.StringWidth(label))
}

// wait is a time to wait in words: "9 min", "3 h", "2 days".
func wait(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "a minute"
	case d < time.Hour:
		return fmt.Sprintf("%d min", int((d+time.Minute-1)/time.Minute))
	case d < 20*time.Hour:
		return fmt.Sprintf("%d h", int(d.Round(time.Hour)/time.Hour))
	}
	days := int((d + 12*time.Hour) / (24 * time.Hour))
	if days == 1 {
		return "1 day"
	}
	return fmt.Sprintf("%d days", days)
}
