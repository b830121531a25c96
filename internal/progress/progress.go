// Package progress records what a learner has done in the course (pages
// read, where they stopped, quiz answers and scores, labs passed) and keeps
// it in a JSON file that is replaced atomically, so a crash never leaves half
// a file behind.
package progress

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/review"
)

// FileName is the name of the progress file inside the state directory.
const FileName = "progress.json"

// formatVersion is written into every file so a later release can migrate.
const formatVersion = 1

// Progress is everything saved about one learner.
type Progress struct {
	Version int `json:"version"`
	// PageNumbering is the numbering of lesson pages the page marks are
	// in (inserted.go); 0 in a file saved before pages were inserted in
	// the middle of lessons 7 and 10.
	PageNumbering int                `json:"page_numbering,omitempty"`
	Lessons       map[string]*Lesson `json:"lessons,omitempty"` // by lesson id
	Last          Position           `json:"last"`              // where the learner stopped
	LastAt        time.Time          `json:"last_at,omitzero"`  // when Last was set, so merges keep the newest
	Updated       time.Time          `json:"updated"`
	// Labs is the latest grade of each lab, passed or not (LabsPassed in
	// the lesson keeps the first pass).
	Labs map[string]LabGrade `json:"labs,omitempty"`
	// Experiments is what the learner did with each experiment, by name.
	Experiments map[string]ExperimentRecord `json:"experiments,omitempty"`
	// LabRuns is what the learner's own code did as replicas under
	// faults (`experiment run --lab`, the lab screen's f), by lab id.
	LabRuns map[string]LabRunRecord `json:"lab_runs,omitempty"`
	// ExperimentMode is how the learner last chose to run experiments:
	// ExperimentModeStep or ExperimentModeAuto, empty until they chose.
	ExperimentMode   string    `json:"experiment_mode,omitempty"`
	ExperimentModeAt time.Time `json:"experiment_mode_at,omitzero"`
	// ExperimentTempo is the auto-play tempo the learner last chose (a
	// Go duration, "0s" for no pause), empty until they chose.
	ExperimentTempo   string    `json:"experiment_tempo,omitempty"`
	ExperimentTempoAt time.Time `json:"experiment_tempo_at,omitzero"`
	// Review is the spaced-review schedule of the questions the learner
	// missed (quiz, checkpoint or prediction), by question id. Files
	// written before it existed have none.
	Review map[string]review.Card `json:"review,omitempty"`
}

// The values of Progress.ExperimentMode.
const (
	ExperimentModeStep = "step" // pause before each step of the script
	ExperimentModeAuto = "auto" // play the script through
)

// LabGrade is how a lab's latest grading ended.
type LabGrade struct {
	Status LabStatus `json:"status"`
	Step   string    `json:"step,omitempty"` // the first step that did not pass
	At     time.Time `json:"at"`
}

// ExperimentRecord is one experiment's history: how often it ran, whether
// it showed what it was built to show, and the learner's first prediction.
type ExperimentRecord struct {
	Runs    int       `json:"runs"`
	Shown   bool      `json:"shown"` // some run showed the effect
	LastRun time.Time `json:"last_run,omitzero"`
	// Predicted is the first prediction's outcome: "right", "wrong", or
	// empty when none was made.
	Predicted   string    `json:"predicted,omitempty"`
	PredictedAt time.Time `json:"predicted_at,omitzero"`
	// Outcome is what the run that judged the prediction bore out (the
	// texts of the options it showed), which a review asks for.
	Outcome []string `json:"outcome,omitempty"`
}

// LabRunRecord counts a lab's runs under faults and says how the last
// one ended.
type LabRunRecord struct {
	Runs     int       `json:"runs"`
	Held     int       `json:"held"`           // runs in which every property held
	Last     string    `json:"last,omitempty"` // the last run's schedule
	LastHeld bool      `json:"last_held"`      // ... and whether it held
	LastRun  time.Time `json:"last_run,omitzero"`
}

// RecordLabRun counts a finished run of lab's code under faults: on
// schedule, held when every property of the lab held.
func (p *Progress) RecordLabRun(lab, schedule string, held bool, at time.Time) {
	if p.LabRuns == nil {
		p.LabRuns = map[string]LabRunRecord{}
	}
	r := p.LabRuns[lab]
	r.Runs++
	if held {
		r.Held++
	}
	r.Last, r.LastHeld, r.LastRun = schedule, held, at
	p.LabRuns[lab] = r
	p.Updated = at
}

// Position is a place in the course: a lesson and a page in it.
type Position struct {
	Lesson string `json:"lesson,omitempty"` // lesson id; empty when nothing was opened yet
	Page   int    `json:"page"`             // zero-based page index
}

// Lesson is the learner's record for one lesson.
type Lesson struct {
	PagesRead  []int                `json:"pages_read,omitempty"` // zero-based, sorted, unique
	LastPage   int                  `json:"last_page"`
	Checks     map[string]Answer    `json:"checks,omitempty"`      // inline checkpoint answers by question id
	Quiz       *QuizResult          `json:"quiz,omitempty"`        // the latest finished quiz attempt
	FirstQuiz  *QuizResult          `json:"first_quiz,omitempty"`  // the first finished attempt, kept
	Attempts   int                  `json:"attempts,omitempty"`    // quiz attempts finished
	BestQuiz   float64              `json:"best_quiz"`             // best score seen, as a share 0..1
	LabsPassed map[string]time.Time `json:"labs_passed,omitempty"` // lab id -> when it first passed
}

// Answer is the learner's answer to one question and how it was graded.
type Answer struct {
	Response string    `json:"response"` // as the learner gave it, e.g. "2", "1,3", "12.5", "3 1 2"
	Score    float64   `json:"score"`    // 0..1
	Correct  bool      `json:"correct"`
	At       time.Time `json:"at"`
}

// QuizResult is one attempt at a lesson's quiz.
type QuizResult struct {
	QuizID   string            `json:"quiz_id"`
	Answers  map[string]Answer `json:"answers"` // by question id
	Score    float64           `json:"score"`   // sum of the answers' scores
	Total    int               `json:"total"`   // number of questions in the quiz
	Finished time.Time         `json:"finished"`
}

// Share is the attempt's score as a share of the total, 0..1.
func (q *QuizResult) Share() float64 {
	if q == nil || q.Total == 0 {
		return 0
	}
	return q.Score / float64(q.Total)
}

// Missed lists the ids of the questions answered wrongly, sorted.
func (q *QuizResult) Missed() []string {
	if q == nil {
		return nil
	}
	var ids []string
	for id, a := range q.Answers {
		if !a.Correct {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// New returns empty progress.
func New() *Progress {
	return &Progress{Version: formatVersion, PageNumbering: pageNumbering, Lessons: map[string]*Lesson{}}
}

// Lesson returns the record for lessonID, creating it when missing.
func (p *Progress) Lesson(lessonID string) *Lesson {
	if p.Lessons == nil {
		p.Lessons = map[string]*Lesson{}
	}
	l := p.Lessons[lessonID]
	if l == nil {
		l = &Lesson{}
		p.Lessons[lessonID] = l
	}
	return l
}

// Peek returns the record for lessonID or nil, without creating it.
func (p *Progress) Peek(lessonID string) *Lesson {
	if p == nil {
		return nil
	}
	return p.Lessons[lessonID]
}

// MarkPageRead records that page (zero-based) of lessonID was shown, and
// makes it the place to continue from.
func (p *Progress) MarkPageRead(lessonID string, page int, now time.Time) {
	l := p.Lesson(lessonID)
	if i, found := slices.BinarySearch(l.PagesRead, page); !found {
		l.PagesRead = slices.Insert(l.PagesRead, i, page)
	}
	l.LastPage = page
	p.Last = Position{Lesson: lessonID, Page: page}
	p.LastAt = now
	p.Updated = now
}

// RecordCheck stores the answer to an inline checkpoint question.
func (p *Progress) RecordCheck(lessonID, questionID string, a Answer) {
	l := p.Lesson(lessonID)
	if l.Checks == nil {
		l.Checks = map[string]Answer{}
	}
	l.Checks[questionID] = a
	p.Updated = a.At
	p.RecordReview(questionID, a.Correct, a.At)
}

// RecordQuiz stores a finished quiz attempt, keeps the first one and the
// best score.
func (p *Progress) RecordQuiz(lessonID string, r QuizResult) {
	l := p.Lesson(lessonID)
	r.Answers = cloneAnswers(r.Answers)
	l.Quiz = &r
	l.Attempts++
	if l.FirstQuiz == nil {
		first := r
		first.Answers = cloneAnswers(r.Answers)
		l.FirstQuiz = &first
	}
	if s := r.Share(); s > l.BestQuiz {
		l.BestQuiz = s
	}
	p.Updated = r.Finished
	p.recordReviewAnswers(r)
}

// RecordLabPassed stores that labID passed; the first time is kept.
func (p *Progress) RecordLabPassed(lessonID, labID string, now time.Time) {
	l := p.Lesson(lessonID)
	if l.LabsPassed == nil {
		l.LabsPassed = map[string]time.Time{}
	}
	if _, ok := l.LabsPassed[labID]; !ok {
		l.LabsPassed[labID] = now
	}
	p.Updated = now
}

// RecordLabGrade stores how a lab's grading ended; a verified pass also
// counts as passed for its lesson.
func (p *Progress) RecordLabGrade(lessonID, labID string, g LabGrade) {
	if p.Labs == nil {
		p.Labs = map[string]LabGrade{}
	}
	p.Labs[labID] = g
	if g.Status == LabStatusPassed {
		p.RecordLabPassed(lessonID, labID, g.At)
	}
	p.Updated = g.At
}

// LabStatus is how a lab's latest grading ended, as the progress file
// records it. The lab screen (internal/tui/screen/lab, progressStatus)
// holds the one mapping from a grade.
type LabStatus string

// The values of LabGrade.Status.
const (
	LabStatusPassed  LabStatus = "passed"  // every step passed, and again under -race (verified)
	LabStatusFailing LabStatus = "failing" // a step failed or did not run
	LabStatusRacy    LabStatus = "racy"    // passed, but the race detector found a data race
	LabStatusFlaky   LabStatus = "flaky"   // passed, then failed on a repeat
	LabStatusError   LabStatus = "error"   // the grading could not run
)

// RecordExperimentRun counts a finished run of experiment name.
func (p *Progress) RecordExperimentRun(name string, shown bool, at time.Time) {
	e := p.experiment(name)
	e.Runs++
	e.Shown = e.Shown || shown
	e.LastRun = at
	p.Experiments[name] = e
	p.Updated = at
}

// SetExperimentMode records the learner's choice between stepping
// through experiments (step) and auto-play, for the runs after.
func (p *Progress) SetExperimentMode(step bool, at time.Time) {
	p.ExperimentMode, p.ExperimentModeAt = ExperimentModeAuto, at
	if step {
		p.ExperimentMode = ExperimentModeStep
	}
	p.Updated = at
}

// SetExperimentTempo records the auto-play tempo the learner chose, for
// the experiments after.
func (p *Progress) SetExperimentTempo(d time.Duration, at time.Time) {
	p.ExperimentTempo, p.ExperimentTempoAt = max(d, 0).String(), at
	p.Updated = at
}

// Tempo is the auto-play tempo the learner last chose, and whether they
// chose one (a value that is no duration counts as none).
func (p *Progress) Tempo() (time.Duration, bool) {
	if p == nil || p.ExperimentTempo == "" {
		return 0, false
	}
	d, err := time.ParseDuration(p.ExperimentTempo)
	if err != nil || d < 0 {
		return 0, false
	}
	return d, true
}

// PredictReviewID is the id an experiment's prediction goes by in the
// review schedule, apart from every course question's.
func PredictReviewID(experiment string) string { return "experiment/" + experiment + "/predict" }

// PredictReviewExperiment is the experiment whose prediction has review
// id id, and whether id is one.
func PredictReviewExperiment(id string) (string, bool) {
	name, ok := strings.CutPrefix(id, "experiment/")
	name, ok2 := strings.CutSuffix(name, "/predict")
	return name, ok && ok2 && name != "" && !strings.Contains(name, "/")
}

// PredictionDue reports whether id is an experiment's prediction that a
// review can ask: one whose judged run's outcome is recorded.
func (p *Progress) PredictionDue(id string) bool {
	name, ok := PredictReviewExperiment(id)
	return ok && p != nil && len(p.Experiments[name].Outcome) > 0
}

// RecordPredictOutcome keeps what the run that judged experiment name's
// prediction bore out (its options' texts), for a review of it.
func (p *Progress) RecordPredictOutcome(name string, outcome []string) {
	e := p.experiment(name)
	e.Outcome = append([]string(nil), outcome...)
	p.Experiments[name] = e
}

// RecordPrediction keeps the learner's first prediction for experiment
// name; later ones (after seeing the answer) do not replace it.
func (p *Progress) RecordPrediction(name string, right bool, at time.Time) {
	e := p.experiment(name)
	if e.Predicted == "" {
		e.Predicted, e.PredictedAt = "wrong", at
		if right {
			e.Predicted = "right"
		}
	}
	p.Experiments[name] = e
	p.Updated = at
}

func (p *Progress) experiment(name string) ExperimentRecord {
	if p.Experiments == nil {
		p.Experiments = map[string]ExperimentRecord{}
	}
	return p.Experiments[name]
}

// ResetLesson forgets everything recorded for a lesson (pages, checks,
// quiz attempts, labs passed), and the place to continue if it was there.
func (p *Progress) ResetLesson(lessonID string, now time.Time) {
	delete(p.Lessons, lessonID)
	if p.Last.Lesson == lessonID {
		p.Last, p.LastAt = Position{}, now
	}
	p.Updated = now
}

// ResetLab forgets a lab's grades and its pass.
func (p *Progress) ResetLab(labID string, now time.Time) {
	delete(p.Labs, labID)
	delete(p.LabRuns, labID)
	for _, l := range p.Lessons {
		if l != nil {
			delete(l.LabsPassed, labID)
		}
	}
	p.Updated = now
}

// ResetExperiment forgets an experiment's runs and prediction.
func (p *Progress) ResetExperiment(name string, now time.Time) {
	delete(p.Experiments, name)
	p.Updated = now
}

// LabPassed reports whether labID of lessonID has passed.
func (p *Progress) LabPassed(lessonID, labID string) bool {
	l := p.Peek(lessonID)
	if l == nil {
		return false
	}
	_, ok := l.LabsPassed[labID]
	return ok
}

// Clone returns a deep copy, so a snapshot can be written in the background
// while the original keeps changing.
func (p *Progress) Clone() *Progress {
	if p == nil {
		return nil
	}
	c := *p
	c.Lessons = make(map[string]*Lesson, len(p.Lessons))
	for id, l := range p.Lessons {
		if l == nil {
			continue
		}
		lc := *l
		lc.PagesRead = slices.Clone(l.PagesRead)
		lc.Checks = cloneAnswers(l.Checks)
		if l.Quiz != nil {
			q := *l.Quiz
			q.Answers = cloneAnswers(l.Quiz.Answers)
			lc.Quiz = &q
		}
		if l.FirstQuiz != nil {
			q := *l.FirstQuiz
			q.Answers = cloneAnswers(l.FirstQuiz.Answers)
			lc.FirstQuiz = &q
		}
		if l.LabsPassed != nil {
			lc.LabsPassed = make(map[string]time.Time, len(l.LabsPassed))
			for k, v := range l.LabsPassed {
				lc.LabsPassed[k] = v
			}
		}
		c.Lessons[id] = &lc
	}
	c.Labs = maps.Clone(p.Labs)
	c.Experiments = maps.Clone(p.Experiments)
	c.LabRuns = maps.Clone(p.LabRuns)
	c.Review = maps.Clone(p.Review)
	return &c
}

func cloneAnswers(m map[string]Answer) map[string]Answer {
	if m == nil {
		return nil
	}
	c := make(map[string]Answer, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
