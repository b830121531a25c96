// Package report sums a learner's progress over the course: every lesson
// with its pages, checkpoints, quiz (best and first score), labs (passed,
// or the step that fails) and experiments (runs, prediction), and the
// totals. `playground progress` prints it and the TUI's progress view
// draws it.
package report

import (
	"fmt"
	"time"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/lessons"
)

// Report is the whole course's progress (`playground progress --json`).
type Report struct {
	File    string   `json:"file"`
	Lessons []Lesson `json:"lessons"`
	Totals  Totals   `json:"totals"`
}

// Lesson is one lesson's progress.
type Lesson struct {
	ID             string       `json:"id"`
	Number         int          `json:"number"`
	Title          string       `json:"title"`
	Pages          int          `json:"pages"`
	PagesRead      int          `json:"pages_read"`
	Checkpoints    int          `json:"checkpoints"`
	ChecksAnswered int          `json:"checks_answered"`
	ChecksRight    int          `json:"checks_right"`
	Checks         []Check      `json:"checks,omitempty"`
	HasQuiz        bool         `json:"has_quiz"`
	QuizTaken      bool         `json:"quiz_taken"`
	QuizBest       float64      `json:"quiz_best"`
	QuizFirst      float64      `json:"quiz_first"`
	QuizAttempts   int          `json:"quiz_attempts"`
	Labs           []Lab        `json:"labs,omitempty"`
	Experiments    []Experiment `json:"experiments,omitempty"`
}

// Check is one inline checkpoint question.
type Check struct {
	ID   string `json:"id"`
	Page int    `json:"page"` // zero-based page it is on
	// State is CheckRight, CheckWrong, CheckPartial or CheckOpen.
	State string  `json:"state"`
	Score float64 `json:"score,omitempty"`
}

// Checkpoint states.
const (
	CheckRight   = "right"
	CheckWrong   = "wrong"
	CheckPartial = "partial"
	CheckOpen    = "not answered"
)

// Lab is one lab's state.
type Lab struct {
	ID string `json:"id"`
	// Number is the lab's number as the course shows it ("3.1": lesson
	// 3's first lab); the folder id is ID.
	Number string             `json:"number,omitempty"`
	Status progress.LabStatus `json:"status"` // a progress.LabStatus, or LabNotGraded
	Step   string             `json:"step,omitempty"`
	At     time.Time          `json:"at,omitzero"`
	// PassedOnce says the lab passed at some time, even if the latest
	// grade does not.
	PassedOnce bool `json:"passed_once,omitempty"`
	// Runs is the lab's code run as replicas under faults: how many
	// runs, how many held, and the last one (nil when never run).
	Runs *progress.LabRunRecord `json:"runs_under_faults,omitempty"`
}

// LabNotGraded is Lab.Status before any grade.
const LabNotGraded progress.LabStatus = "not graded"

// Experiment is one experiment's state.
type Experiment struct {
	Name      string `json:"name"`
	Runs      int    `json:"runs"`
	Shown     bool   `json:"shown"`
	Predicted string `json:"predicted,omitempty"` // "right", "wrong"
}

// Totals sums the course.
type Totals struct {
	Pages           int `json:"pages"`
	PagesRead       int `json:"pages_read"`
	Checkpoints     int `json:"checkpoints"`
	ChecksRight     int `json:"checks_right"`
	Quizzes         int `json:"quizzes"`
	QuizzesTaken    int `json:"quizzes_taken"`
	Labs            int `json:"labs"`
	LabsPassed      int `json:"labs_passed"`
	Experiments     int `json:"experiments"`
	ExperimentsRun  int `json:"experiments_run"`
	PredictionsMade int `json:"predictions_made"`
	Predictions     int `json:"predictions"`
}

// Build sums p over course c; file is where the progress is kept.
func Build(c *lessons.Course, p *progress.Progress, file string) Report {
	r := Report{File: file}
	t := &r.Totals
	for _, l := range c.Lessons {
		lp := Lesson{ID: l.ID, Number: l.Number, Title: l.Title, Pages: len(l.Pages), HasQuiz: len(l.QuizQuestions()) > 0}
		rec := p.Peek(l.ID)
		for i, pg := range l.Pages {
			for _, id := range pg.Checks {
				lp.Checks = append(lp.Checks, checkState(rec, id, i))
			}
		}
		lp.Checkpoints = len(lp.Checks)
		for _, ch := range lp.Checks {
			if ch.State != CheckOpen {
				lp.ChecksAnswered++
			}
			if ch.State == CheckRight {
				lp.ChecksRight++
			}
		}
		if rec != nil {
			lp.PagesRead = min(len(rec.PagesRead), lp.Pages)
			if rec.Quiz != nil {
				lp.QuizTaken, lp.QuizBest, lp.QuizAttempts = true, rec.BestQuiz, max(rec.Attempts, 1)
				lp.QuizFirst = rec.Quiz.Share()
				if rec.FirstQuiz != nil {
					lp.QuizFirst = rec.FirstQuiz.Share()
				}
			}
		}
		for _, lab := range l.Labs {
			st := Lab{ID: lab, Number: c.LabNumber(lab), Status: LabNotGraded, PassedOnce: p.LabPassed(l.ID, lab)}
			if g, ok := p.Labs[lab]; ok {
				st.Status, st.Step, st.At = g.Status, g.Step, g.At
			} else if st.PassedOnce {
				st.Status, st.At = progress.LabStatusPassed, rec.LabsPassed[lab]
			}
			if r, ok := p.LabRuns[lab]; ok && r.Runs > 0 {
				st.Runs = &r
			}
			lp.Labs = append(lp.Labs, st)
			t.Labs++
			if st.PassedOnce {
				t.LabsPassed++
			}
		}
		for _, name := range l.Experiments {
			e := p.Experiments[name]
			lp.Experiments = append(lp.Experiments, Experiment{Name: name, Runs: e.Runs, Shown: e.Shown, Predicted: e.Predicted})
			t.Experiments++
			if e.Runs > 0 {
				t.ExperimentsRun++
			}
			if e.Predicted != "" {
				t.PredictionsMade++
				if e.Predicted == "right" {
					t.Predictions++
				}
			}
		}
		t.Pages += lp.Pages
		t.PagesRead += lp.PagesRead
		t.Checkpoints += lp.Checkpoints
		t.ChecksRight += lp.ChecksRight
		if lp.HasQuiz {
			t.Quizzes++
			if lp.QuizTaken {
				t.QuizzesTaken++
			}
		}
		r.Lessons = append(r.Lessons, lp)
	}
	return r
}

func checkState(rec *progress.Lesson, id string, page int) Check {
	ch := Check{ID: id, Page: page, State: CheckOpen}
	if rec == nil {
		return ch
	}
	a, ok := rec.Checks[id]
	switch {
	case !ok:
	case a.Correct:
		ch.State, ch.Score = CheckRight, 1
	case a.Score > 0:
		ch.State, ch.Score = CheckPartial, a.Score
	default:
		ch.State = CheckWrong
	}
	return ch
}

// RunsText says in words how a lab's code did under faults: "3 runs, 2
// held · last: schedule leader-pause, held (12-04 18:20)".
func RunsText(r progress.LabRunRecord) string {
	runs := "1 run"
	if r.Runs != 1 {
		runs = fmt.Sprintf("%d runs", r.Runs)
	}
	out := fmt.Sprintf("%s, %d held", runs, r.Held)
	if r.Last == "" {
		return out
	}
	how := "a property broke"
	if r.LastHeld {
		how = "held"
	}
	out += fmt.Sprintf(" · last: %s, %s", r.Last, how)
	if !r.LastRun.IsZero() {
		out += r.LastRun.Local().Format(" (01-02 15:04)")
	}
	return out
}
