package tui

import (
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/tui/screen"
)

func TestProgressViewOpensFromAnywhereAndJumps(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.mustShow("P progress")
	h.keys("enter", "n") // lesson 1, two pages
	h.keys("P")
	h.mustShow("Your progress", "Total: pages 2/", "01 First steps with a test course", "pages 2/3",
		"checkpoints", "not answered", "quiz", "not taken", "lab 1.1 · 01_cas", "not graded yet", "experiment fencing", "not run")
	h.checkFits()
	// The quiz row opens the quiz.
	h.keys("down", "down", "enter")
	h.mustShow("Question 1 of")
}

func TestProgressViewResetsALessonAfterConfirmation(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("enter", "n", "esc", "P")
	h.mustShow("pages 2/3")
	h.keys("r")
	h.mustShow("Forget lesson 01 First steps with a test course")
	h.keys("n") // anything but y keeps it
	h.mustShow("pages 2/3")
	h.mustNotShow("Forget lesson")
	h.keys("r", "y")
	h.mustShow("Forgot lesson 01", "pages 0/3")
	if p := h.savedProgress(); p.Peek(h.m.course.Lessons[0].ID) != nil || p.Last.Lesson != "" {
		t.Fatalf("the reset lesson is still saved: %+v", p.Lessons)
	}
	// A later save (another page read) must not bring the lesson back.
	h.keys("esc", "2", "enter")
	p := h.savedProgress()
	if rec := p.Peek(h.m.course.Lessons[0].ID); rec != nil {
		t.Fatalf("a save after the reset resurrected lesson 1: %+v", rec)
	}
	h.keys("esc")
	h.mustShow("0/3")
}

func TestProgressViewShowsLabAndExperimentState(t *testing.T) {
	at := testNow.Add(-time.Hour)
	p := progress.New()
	p.RecordLabGrade("first-steps", "01_cas", progress.LabGrade{Status: progress.LabStatusPassed, At: at})
	p.RecordLabGrade("first-steps", "01_cas", progress.LabGrade{Status: "failing", Step: "step 3", At: testNow})
	p.RecordExperimentRun("fencing", true, at)
	p.RecordPrediction("fencing", false, at)
	p.RecordQuiz("first-steps", progress.QuizResult{Score: 2, Total: 4, Finished: at})
	p.RecordQuiz("first-steps", progress.QuizResult{Score: 4, Total: 4, Finished: testNow})
	h := newHarness(t, 80, 24, func(o *Options) { o.Progress = p })
	h.keys("P")
	h.mustShow("passed before; now failing at step 3", "ran 1 time, effect shown · predicted wrong",
		"best 100% · first 50% · 2 attempts", "labs 1/1 passed", "experiments 1/")
}

func TestLabGradesAreRecorded(t *testing.T) {
	now := testNow
	h := newHarness(t, 80, 24, func(o *Options) {
		o.Now = func() time.Time { now = now.Add(time.Second); return now }
	})
	h.send(screen.LabGraded{Lab: "01_cas", Status: "failing", Step: "step 3 (Swap)"})
	if g := h.savedProgress().Labs["01_cas"]; g.Status != "failing" || g.Step != "step 3 (Swap)" || !g.At.Equal(now) {
		t.Fatalf("saved grade %+v", g)
	}
	h.send(screen.LabPassed{Lab: "01_cas"})
	p := h.savedProgress()
	if g := p.Labs["01_cas"]; g.Status != progress.LabStatusPassed || !p.LabPassed("first-steps", "01_cas") {
		t.Fatalf("verified pass saved as %+v", g)
	}
	h.keys("P")
	h.mustShow("✓ passed, verified")
}

func TestExperimentRunsAndPredictionsAreRecorded(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.send(screen.Predicted{Name: "fencing", Right: true})
	h.send(screen.ExperimentRan{Name: "fencing", Shown: true})
	h.send(screen.Predicted{Name: "fencing", Right: false}) // a later pick does not replace the first
	e := h.savedProgress().Experiments["fencing"]
	if e.Runs != 1 || !e.Shown || e.Predicted != "right" {
		t.Fatalf("saved experiment %+v", e)
	}
	h.keys("P")
	h.mustShow("ran 1 time, effect shown · predicted right")
}

// TestFullHelpKeepsTheGlobalKeysAt80Columns: the lab screen's keys fill
// the width; the keys that work everywhere are still listed.
func TestFullHelpKeepsTheGlobalKeysAt80Columns(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("l", "?")
	h.mustShow("Keys on this screen", "P progress", "ctrl+c quit now", "esc back")
	h.checkFits()
}

// TestFirstExperimentRunIsInStepMode: an experiment the learner never ran
// opens in step mode and the footer says so; once it has run it opens in
// auto-play, and after the learner picks a mode every experiment opens in
// that one.
func TestFirstExperimentRunIsInStepMode(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("x")
	h.mustShow("Experiment: fencing", "next run: step mode · a auto-play")
	h.keys("esc")
	h.send(screen.ExperimentRan{Name: "fencing", Shown: true})
	h.keys("x")
	h.mustShow("Experiment: fencing", "next run: auto-play, 4 s a step · t tempo · a step mode")
	h.keys("a", "esc", "x")
	h.mustShow("next run: step mode · a auto-play")
	h.keys("a", "esc", "x")
	h.mustShow("next run: auto-play, 4 s a step · t tempo · a step mode")
	h.keys("a", "esc")

	// The choice is saved: after a restart it still holds.
	saved := h.savedProgress()
	if saved.ExperimentMode != progress.ExperimentModeStep {
		t.Fatalf("saved experiment mode %q, want step", saved.ExperimentMode)
	}
	h2 := newHarness(t, 80, 24, func(o *Options) { o.Progress = saved })
	h2.keys("x")
	h2.mustShow("Experiment: fencing", "next run: step mode · a auto-play")
}

// TestExperimentTempoIsKept: the auto-play tempo chosen with t is saved
// with the progress and holds in the next experiment and after a restart.
func TestExperimentTempoIsKept(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.send(screen.ExperimentRan{Name: "fencing", Shown: true}) // auto-play from now on
	h.keys("x")
	h.mustShow("next run: auto-play, 4 s a step")
	h.keys("t")
	h.mustShow("next run: auto-play, 8 s a step")
	h.keys("esc", "x")
	h.mustShow("next run: auto-play, 8 s a step")
	h.keys("esc")
	saved := h.savedProgress()
	if d, ok := saved.Tempo(); !ok || d != 8*time.Second {
		t.Fatalf("saved tempo %v %v (%q), want 8s", d, ok, saved.ExperimentTempo)
	}
	h2 := newHarness(t, 80, 24, func(o *Options) { o.Progress = saved })
	h2.keys("x")
	h2.mustShow("next run: auto-play, 8 s a step")
}

// TestLabRunsUnderFaultsAreRecorded: a run of the learner's code under
// faults that ended judged goes to progress, and the progress view shows
// it under its lab (runs, how many held, the last schedule and outcome);
// it showed nothing of them.
func TestLabRunsUnderFaultsAreRecorded(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.send(screen.LabRanUnderFaults{Lab: "01_cas", Schedule: "leader-pause", Held: true})
	h.send(screen.LabRanUnderFaults{Lab: "01_cas", Schedule: "by-hand", Held: false})
	r := h.savedProgress().LabRuns["01_cas"]
	if r.Runs != 2 || r.Held != 1 || r.Last != "by-hand" || r.LastHeld {
		t.Fatalf("saved lab runs %+v", r)
	}
	h.keys("P")
	h.mustShow("under faults", "2 runs, 1 held · last: by-hand, a property broke")
	h.checkFits()
}
