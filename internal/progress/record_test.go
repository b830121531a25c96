package progress

import (
	"testing"
	"time"
)

// A retry must not replace the first attempt's score (it once showed 100%
// where the first try had been 4.8/8).
func TestQuizRetryKeepsTheFirstAttempt(t *testing.T) {
	p := New()
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	p.RecordQuiz("l", QuizResult{QuizID: "l", Score: 4.8, Total: 8, Finished: t0})
	p.RecordQuiz("l", QuizResult{QuizID: "l", Score: 8, Total: 8, Finished: t0.Add(time.Hour)})
	l := p.Lessons["l"]
	if l.FirstQuiz == nil || l.FirstQuiz.Score != 4.8 || l.Quiz.Score != 8 || l.BestQuiz != 1 || l.Attempts != 2 {
		t.Fatalf("after a retry: first %+v latest %+v best %v attempts %d", l.FirstQuiz, l.Quiz, l.BestQuiz, l.Attempts)
	}
	c := p.Clone()
	c.Lessons["l"].FirstQuiz.Score = 0
	if p.Lessons["l"].FirstQuiz.Score != 4.8 {
		t.Error("Clone shares the first attempt with the original")
	}
}

func TestLabGradesAndExperiments(t *testing.T) {
	p := New()
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	p.RecordLabGrade("cas", "01_cas", LabGrade{Status: "failing", Step: "Step 3", At: t0})
	if p.LabPassed("cas", "01_cas") {
		t.Error("a failing grade counts as a pass")
	}
	p.RecordLabGrade("cas", "01_cas", LabGrade{Status: LabStatusPassed, At: t0.Add(time.Minute)})
	if !p.LabPassed("cas", "01_cas") || p.Labs["01_cas"].Status != "passed" {
		t.Errorf("a verified pass is not recorded: %+v", p.Labs)
	}
	p.RecordPrediction("fencing", false, t0)
	p.RecordPrediction("fencing", true, t0.Add(time.Minute)) // after seeing the answer
	p.RecordExperimentRun("fencing", true, t0.Add(2*time.Minute))
	p.RecordExperimentRun("fencing", false, t0.Add(3*time.Minute))
	if e := p.Experiments["fencing"]; e.Predicted != "wrong" || e.Runs != 2 || !e.Shown || !e.LastRun.Equal(t0.Add(3*time.Minute)) {
		t.Errorf("experiment record: %+v", e)
	}

	// Two processes' records merge without losing either.
	o := New()
	o.RecordPrediction("quorum", true, t0)
	o.RecordLabGrade("lock", "02_lock", LabGrade{Status: "racy", Step: "Step 5", At: t0})
	o.RecordQuiz("cas", QuizResult{Score: 1, Total: 5, Finished: t0.Add(-time.Hour)})
	p.RecordQuiz("cas", QuizResult{Score: 5, Total: 5, Finished: t0})
	p.Merge(o)
	if p.Experiments["quorum"].Predicted != "right" || p.Labs["02_lock"].Status != "racy" || p.Lessons["cas"].FirstQuiz.Score != 1 {
		t.Errorf("merge lost something: %+v %+v %+v", p.Experiments, p.Labs, p.Lessons["cas"].FirstQuiz)
	}

	p.ResetLab("01_cas", t0)
	p.ResetExperiment("fencing", t0)
	p.ResetLesson("cas", t0)
	if p.LabPassed("cas", "01_cas") || p.Labs["01_cas"].Status != "" || p.Experiments["fencing"].Runs != 0 || p.Lessons["cas"] != nil {
		t.Errorf("reset left records behind")
	}
}

// TestExperimentMode: the learner's choice of step mode or auto-play is
// kept, a merge takes the newer choice, and a hand-edited value that means
// nothing is dropped.
func TestExperimentMode(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	p := New()
	p.SetExperimentMode(true, t0)
	if p.ExperimentMode != ExperimentModeStep || !p.ExperimentModeAt.Equal(t0) {
		t.Fatalf("step chosen, recorded %q at %v", p.ExperimentMode, p.ExperimentModeAt)
	}
	o := New()
	o.SetExperimentMode(false, t0.Add(time.Minute))
	p.Merge(o)
	if p.ExperimentMode != ExperimentModeAuto {
		t.Fatalf("merge kept %q, want the newer auto", p.ExperimentMode)
	}
	older := New()
	older.SetExperimentMode(true, t0)
	p.Merge(older)
	if p.ExperimentMode != ExperimentModeAuto {
		t.Fatalf("an older choice replaced the newer one: %q", p.ExperimentMode)
	}
	p.ExperimentMode = "sometimes"
	p.sanitize()
	if p.ExperimentMode != "" {
		t.Fatalf("a meaningless mode survived: %q", p.ExperimentMode)
	}
}
