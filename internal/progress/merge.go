package progress

import (
	"math"
	"slices"
	"time"
)

// Merge adds to p everything o records, so that saving the result loses
// nothing either side wrote: pages read and labs passed are united (a lab
// keeps its first pass), each check answer and the latest quiz attempt are
// taken from whichever is newer, the best quiz score is the higher one,
// the place to continue is the one saved most recently, and of a
// question's two review cards the one answered last wins.
func (p *Progress) Merge(o *Progress) {
	if o == nil {
		return
	}
	newer := !o.LastAt.Before(p.LastAt) || p.Last.Lesson == ""
	for id, ol := range o.Lessons {
		if ol != nil {
			p.mergeLesson(id, ol, newer && o.Last.Lesson == id)
		}
	}
	for lab, g := range o.Labs {
		if p.Labs == nil {
			p.Labs = map[string]LabGrade{}
		}
		if cur, ok := p.Labs[lab]; !ok || g.At.After(cur.At) {
			p.Labs[lab] = g
		}
	}
	p.mergeExperiments(o)
	p.mergeLabRuns(o)
	p.mergeReview(o)
	if newer && o.Last.Lesson != "" {
		p.Last, p.LastAt = o.Last, o.LastAt
	}
	if o.ExperimentMode != "" && (p.ExperimentMode == "" || o.ExperimentModeAt.After(p.ExperimentModeAt)) {
		p.ExperimentMode, p.ExperimentModeAt = o.ExperimentMode, o.ExperimentModeAt
	}
	if o.ExperimentTempo != "" && (p.ExperimentTempo == "" || o.ExperimentTempoAt.After(p.ExperimentTempoAt)) {
		p.ExperimentTempo, p.ExperimentTempoAt = o.ExperimentTempo, o.ExperimentTempoAt
	}
	if o.Updated.After(p.Updated) {
		p.Updated = o.Updated
	}
}

// mergeLesson merges one lesson's record ol into p's; takeLast says o's
// place to continue is in this lesson and is the newer one.
func (p *Progress) mergeLesson(id string, ol *Lesson, takeLast bool) {
	_, had := p.Lessons[id]
	l := p.Lesson(id)
	for _, pg := range ol.PagesRead {
		if i, found := slices.BinarySearch(l.PagesRead, pg); !found {
			l.PagesRead = slices.Insert(l.PagesRead, i, pg)
		}
	}
	if takeLast || !had {
		l.LastPage = ol.LastPage
	}
	for q, a := range ol.Checks {
		if l.Checks == nil {
			l.Checks = map[string]Answer{}
		}
		if cur, ok := l.Checks[q]; !ok || !a.At.Before(cur.At) {
			l.Checks[q] = a
		}
	}
	if ol.Quiz != nil && (l.Quiz == nil || !ol.Quiz.Finished.Before(l.Quiz.Finished)) {
		q := *ol.Quiz
		q.Answers = cloneAnswers(ol.Quiz.Answers)
		l.Quiz = &q
	}
	l.BestQuiz = max(l.BestQuiz, ol.BestQuiz)
	if ol.FirstQuiz != nil && (l.FirstQuiz == nil || ol.FirstQuiz.Finished.Before(l.FirstQuiz.Finished)) {
		q := *ol.FirstQuiz
		q.Answers = cloneAnswers(ol.FirstQuiz.Answers)
		l.FirstQuiz = &q
	}
	l.Attempts = max(l.Attempts, ol.Attempts)
	for lab, at := range ol.LabsPassed {
		if l.LabsPassed == nil {
			l.LabsPassed = map[string]time.Time{}
		}
		if cur, ok := l.LabsPassed[lab]; !ok || at.Before(cur) {
			l.LabsPassed[lab] = at
		}
	}
}

// mergeExperiments merges o's experiment records into p's: run counts
// and "shown" are united, the first prediction is kept, and the outcome
// is the latest run's.
func (p *Progress) mergeExperiments(o *Progress) {
	for name, oe := range o.Experiments {
		e := p.experiment(name)
		e.Runs = max(e.Runs, oe.Runs)
		e.Shown = e.Shown || oe.Shown
		ranLater := oe.LastRun.After(e.LastRun)
		if ranLater {
			e.LastRun = oe.LastRun
		}
		if oe.Predicted != "" && (e.Predicted == "" || oe.PredictedAt.Before(e.PredictedAt)) {
			e.Predicted, e.PredictedAt = oe.Predicted, oe.PredictedAt
		}
		if len(oe.Outcome) > 0 && (len(e.Outcome) == 0 || ranLater) {
			e.Outcome = oe.Outcome
		}
		p.Experiments[name] = e
	}
}

// mergeLabRuns merges o's lab runs into p's: the counts are the larger,
// the last run the later.
func (p *Progress) mergeLabRuns(o *Progress) {
	for lab, or := range o.LabRuns {
		if p.LabRuns == nil {
			p.LabRuns = map[string]LabRunRecord{}
		}
		r := p.LabRuns[lab]
		r.Runs, r.Held = max(r.Runs, or.Runs), max(r.Held, or.Held)
		if or.LastRun.After(r.LastRun) {
			r.Last, r.LastHeld, r.LastRun = or.Last, or.LastHeld, or.LastRun
		}
		p.LabRuns[lab] = r
	}
}

// sanitize brings hand-edited values back into range, so a score of 7 in
// the file shows as 100%, not 700%: shares and scores are clamped to 0..1
// (a quiz's total score to 0..Total), page numbers below zero are dropped,
// and a position pointing nowhere is cleared.
func (p *Progress) sanitize() {
	for _, l := range p.Lessons {
		l.PagesRead = slices.DeleteFunc(l.PagesRead, func(pg int) bool { return pg < 0 })
		slices.Sort(l.PagesRead)
		l.PagesRead = slices.Compact(l.PagesRead)
		l.LastPage = max(l.LastPage, 0)
		l.BestQuiz = clamp(l.BestQuiz, 1)
		sanitizeAnswers(l.Checks)
		for _, q := range []*QuizResult{l.Quiz, l.FirstQuiz} {
			if q != nil {
				q.Total = max(q.Total, 0)
				q.Score = clamp(q.Score, float64(q.Total))
				sanitizeAnswers(q.Answers)
			}
		}
		l.Attempts = max(l.Attempts, 0)
	}
	p.Last.Page = max(p.Last.Page, 0)
	if p.ExperimentMode != ExperimentModeStep && p.ExperimentMode != ExperimentModeAuto {
		p.ExperimentMode = ""
	}
	for name, e := range p.Experiments {
		e.Runs = max(e.Runs, 0)
		if e.Predicted != "right" && e.Predicted != "wrong" {
			e.Predicted = ""
		}
		p.Experiments[name] = e
	}
	p.sanitizeReview()
}

func sanitizeAnswers(m map[string]Answer) {
	for id, a := range m {
		a.Score = clamp(a.Score, 1)
		m[id] = a
	}
}

// clamp returns v within 0..hi; NaN counts as 0.
func clamp(v, hi float64) float64 {
	if math.IsNaN(v) || v < 0 {
		return 0
	}
	return math.Min(v, hi)
}
