package progress

import (
	"slices"
	"time"

	"github.com/ownership-election/playground/internal/review"
)

// RecordReview puts a graded answer to question id through the review
// schedule (internal/review): a miss, anywhere (quiz, checkpoint,
// prediction, review), puts the question in the first box; a right answer
// moves a due question up a box. Right answers to questions never missed
// add nothing.
func (p *Progress) RecordReview(id string, right bool, at time.Time) {
	card, had := p.Review[id]
	next, ok := review.Default().Answer(card, had, right, at)
	if !ok {
		return
	}
	if p.Review == nil {
		p.Review = map[string]review.Card{}
	}
	p.Review[id] = next
	p.Updated = at
}

// recordReviewAnswers feeds every answer of a finished quiz attempt to
// the review schedule, in id order so a run is reproducible.
func (p *Progress) recordReviewAnswers(r QuizResult) {
	ids := make([]string, 0, len(r.Answers))
	for id := range r.Answers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		a := r.Answers[id]
		at := a.At
		if at.IsZero() {
			at = r.Finished
		}
		p.RecordReview(id, a.Correct, at)
	}
}

// DueForReview lists the questions due for review at now, the longest
// overdue first.
func (p *Progress) DueForReview(now time.Time) []string {
	if p == nil {
		return nil
	}
	return review.Due(p.Review, now)
}

// NextReview is when the next question not yet due comes back, and false
// when none waits.
func (p *Progress) NextReview(now time.Time) (time.Time, bool) {
	if p == nil {
		return time.Time{}, false
	}
	return review.Next(p.Review, now)
}

// ForgetReview takes questions out of review (a reset of their lesson).
func (p *Progress) ForgetReview(ids []string, now time.Time) {
	for _, id := range ids {
		delete(p.Review, id)
	}
	p.Updated = now
}

// mergeReview keeps, of two records of a card, the one answered last.
func (p *Progress) mergeReview(o *Progress) {
	for id, oc := range o.Review {
		if p.Review == nil {
			p.Review = map[string]review.Card{}
		}
		if cur, ok := p.Review[id]; !ok || review.Newer(oc, cur) {
			p.Review[id] = oc
		}
	}
}

// sanitizeReview moves boxes edited out of range back into the schedule.
func (p *Progress) sanitizeReview() {
	s := review.Default()
	for id, c := range p.Review {
		p.Review[id] = s.Clamp(c)
	}
}
