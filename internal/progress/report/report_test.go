package report

import (
	"os"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/lessons"
)

func TestBuildCountsChecksQuizLabsAndExperiments(t *testing.T) {
	c, probs := lessons.Load(lessons.Sources{Course: os.DirFS("../../tui/testdata/course"), CourseRoot: "../../tui/testdata/course"})
	if len(probs) > 0 {
		t.Fatalf("test course: %v", probs)
	}
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	p := progress.New()
	p.MarkPageRead("first-steps", 0, at)
	p.RecordCheck("first-steps", "ts-check-three", progress.Answer{Score: 0.5, At: at})
	p.RecordQuiz("first-steps", progress.QuizResult{Score: 1, Total: 4, Finished: at})
	p.RecordQuiz("first-steps", progress.QuizResult{Score: 3, Total: 4, Finished: at})
	p.RecordLabGrade("first-steps", "01_cas", progress.LabGrade{Status: progress.LabStatusPassed, At: at})
	p.RecordLabGrade("first-steps", "01_cas", progress.LabGrade{Status: "failing", Step: "step 2", At: at})
	p.RecordExperimentRun("fencing", false, at)
	p.RecordPrediction("fencing", true, at)

	r := Build(c, p, "progress.json")
	l := r.Lessons[0]
	if l.PagesRead != 1 || l.Checkpoints != 1 || l.ChecksAnswered != 1 || l.ChecksRight != 0 || l.Checks[0].State != CheckPartial {
		t.Fatalf("pages and checks: %+v", l)
	}
	if !l.QuizTaken || l.QuizBest != 0.75 || l.QuizFirst != 0.25 || l.QuizAttempts != 2 {
		t.Fatalf("quiz: best %v first %v attempts %d", l.QuizBest, l.QuizFirst, l.QuizAttempts)
	}
	if lab := l.Labs[0]; lab.Status != "failing" || lab.Step != "step 2" || !lab.PassedOnce {
		t.Fatalf("lab: %+v", lab)
	}
	if e := l.Experiments[0]; e.Runs != 1 || e.Shown || e.Predicted != "right" {
		t.Fatalf("experiment: %+v", e)
	}
	tot := r.Totals
	if tot.LabsPassed != 1 || tot.QuizzesTaken != 1 || tot.Quizzes != 2 || tot.ExperimentsRun != 1 || tot.Predictions != 1 {
		t.Fatalf("totals: %+v", tot)
	}
}

func TestRunsText(t *testing.T) {
	got := RunsText(progress.LabRunRecord{Runs: 1, Held: 1, Last: "leader-pause", LastHeld: true})
	if got != "1 run, 1 held · last: leader-pause, held" {
		t.Errorf("%q", got)
	}
}
