package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/lessons"
)

func init() {
	Register(&Command{
		Name:    "progress",
		Usage:   "progress [--json] | progress reset TARGET",
		Summary: "show what you have done in the course, or forget part of it",
		Help: `Prints every lesson with its pages read, checkpoints answered, quiz
scores (best and first), labs (passed, or the step that fails) and
experiments (runs, whether your prediction was right), and the totals.

  --json          the same as one JSON object
  reset TARGET    forget a lesson (its id), a lab (01_cas), an experiment
                  (its name) or everything (all); close the course first,
                  or it records what it still remembers again

Exit codes: 0 done, 1 the progress file could not be read or written,
2 bad usage or an unknown TARGET.`,
		Run: runProgress,
	})
}

// ProgressReport is `playground progress --json`.
type ProgressReport struct {
	File    string           `json:"file"`
	Lessons []LessonProgress `json:"lessons"`
	Totals  ProgressTotals   `json:"totals"`
}

// LessonProgress is one lesson's line.
type LessonProgress struct {
	ID             string               `json:"id"`
	Title          string               `json:"title"`
	Pages          int                  `json:"pages"`
	PagesRead      int                  `json:"pages_read"`
	Checkpoints    int                  `json:"checkpoints"`
	ChecksAnswered int                  `json:"checks_answered"`
	ChecksRight    int                  `json:"checks_right"`
	QuizTaken      bool                 `json:"quiz_taken"`
	QuizBest       float64              `json:"quiz_best"`
	QuizFirst      float64              `json:"quiz_first"`
	QuizAttempts   int                  `json:"quiz_attempts"`
	Labs           []LabProgress        `json:"labs,omitempty"`
	Experiments    []ExperimentProgress `json:"experiments,omitempty"`
}

// LabProgress is one lab's state.
type LabProgress struct {
	ID     string    `json:"id"`
	Status string    `json:"status"` // "passed", "failing", "racy", "flaky", "error", "not graded"
	Step   string    `json:"step,omitempty"`
	At     time.Time `json:"at,omitzero"`
}

// ExperimentProgress is one experiment's state.
type ExperimentProgress struct {
	Name      string `json:"name"`
	Runs      int    `json:"runs"`
	Shown     bool   `json:"shown"`
	Predicted string `json:"predicted,omitempty"` // "right", "wrong"
}

// ProgressTotals sums the course.
type ProgressTotals struct {
	Pages, PagesRead             int
	Checkpoints, ChecksRight     int
	Quizzes, QuizzesTaken        int
	Labs, LabsPassed             int
	Experiments, ExperimentsRun  int
	PredictionsMade, Predictions int
}

func runProgress(ctx context.Context, env *Env, args []string) error {
	fs := flag.NewFlagSet("progress", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return Usagef("%v", err)
	}
	course, _, err := loadCourse(env, "")
	if err != nil {
		return err
	}
	path, err := progress.DefaultPath()
	if err != nil {
		return fmt.Errorf("progress: %w", err)
	}
	if fs.NArg() > 0 {
		if fs.Arg(0) != "reset" || fs.NArg() != 2 {
			return Usagef("progress reset TARGET (a lesson id, a lab id, an experiment name, or all)")
		}
		return resetProgress(env, course, path, fs.Arg(1))
	}
	p, notice := progress.Load(path, time.Now())
	if notice != nil {
		fmt.Fprintf(env.Stderr, "playground progress: %s\n", notice)
	}
	r := buildReport(course, p, path)
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	writeProgress(env.Stdout, r)
	return nil
}

func buildReport(c *lessons.Course, p *progress.Progress, path string) ProgressReport {
	r := ProgressReport{File: path}
	t := &r.Totals
	for _, l := range c.Lessons {
		lp := LessonProgress{ID: l.ID, Title: l.Title, Pages: len(l.Pages)}
		rec := p.Peek(l.ID)
		var checks []string
		for _, pg := range l.Pages {
			checks = append(checks, pg.Checks...)
		}
		lp.Checkpoints = len(checks)
		if rec != nil {
			lp.PagesRead = min(len(rec.PagesRead), lp.Pages)
			for _, id := range checks {
				if a, ok := rec.Checks[id]; ok {
					lp.ChecksAnswered++
					if a.Correct {
						lp.ChecksRight++
					}
				}
			}
			if rec.Quiz != nil {
				lp.QuizTaken, lp.QuizBest, lp.QuizAttempts = true, rec.BestQuiz, max(rec.Attempts, 1)
				lp.QuizFirst = rec.Quiz.Share()
				if rec.FirstQuiz != nil {
					lp.QuizFirst = rec.FirstQuiz.Share()
				}
			}
		}
		for _, lab := range l.Labs {
			st := LabProgress{ID: lab, Status: "not graded"}
			if g, ok := p.Labs[lab]; ok {
				st.Status, st.Step, st.At = g.Status, g.Step, g.At
			}
			if rec != nil {
				if at, ok := rec.LabsPassed[lab]; ok && st.Status != progress.LabStatusPassed {
					// Passed once; a later grade may have failed since.
					if st.Status == "not graded" {
						st.Status, st.At = progress.LabStatusPassed, at
					}
				}
			}
			lp.Labs = append(lp.Labs, st)
			t.Labs++
			if p.LabPassed(l.ID, lab) {
				t.LabsPassed++
			}
		}
		for _, name := range l.Experiments {
			e := p.Experiments[name]
			lp.Experiments = append(lp.Experiments, ExperimentProgress{Name: name, Runs: e.Runs, Shown: e.Shown, Predicted: e.Predicted})
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
		t.Quizzes++
		if lp.QuizTaken {
			t.QuizzesTaken++
		}
		r.Lessons = append(r.Lessons, lp)
	}
	return r
}

func writeProgress(w io.Writer, r ProgressReport) {
	var b strings.Builder
	for i, l := range r.Lessons {
		fmt.Fprintf(&b, "%2d %s\n", i+1, l.Title)
		quiz := "quiz not taken"
		if l.QuizTaken {
			quiz = fmt.Sprintf("quiz best %.0f%% (first %.0f%%, %d attempt%s)", 100*l.QuizBest, 100*l.QuizFirst, l.QuizAttempts, plural(l.QuizAttempts))
		}
		fmt.Fprintf(&b, "   pages %d/%d · checkpoints %d/%d right · %s\n", l.PagesRead, l.Pages, l.ChecksRight, l.Checkpoints, quiz)
		for _, lab := range l.Labs {
			line := lab.Status
			if lab.Step != "" {
				line += " at " + lab.Step
			}
			if !lab.At.IsZero() {
				line += lab.At.Local().Format(" (01-02 15:04)")
			}
			fmt.Fprintf(&b, "   lab %-16s %s\n", lab.ID, line)
		}
		for _, e := range l.Experiments {
			line := "not run"
			if e.Runs > 0 {
				line = fmt.Sprintf("ran %d time%s", e.Runs, plural(e.Runs))
				if e.Shown {
					line += ", showed its effect"
				}
			}
			if e.Predicted != "" {
				line += ", prediction " + e.Predicted
			}
			fmt.Fprintf(&b, "   experiment %-24s %s\n", e.Name, line)
		}
	}
	t := r.Totals
	fmt.Fprintf(&b, "\nTotal: pages %d/%d · checkpoints %d/%d right · quizzes %d/%d taken · labs %d/%d passed · experiments %d/%d run",
		t.PagesRead, t.Pages, t.ChecksRight, t.Checkpoints, t.QuizzesTaken, t.Quizzes, t.LabsPassed, t.Labs, t.ExperimentsRun, t.Experiments)
	if t.PredictionsMade > 0 {
		fmt.Fprintf(&b, " · predictions %d/%d right", t.Predictions, t.PredictionsMade)
	}
	fmt.Fprintf(&b, "\nSaved in %s\n", r.File)
	io.WriteString(w, b.String())
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// resetProgress forgets one target under the progress file's lock.
func resetProgress(env *Env, c *lessons.Course, path, target string) error {
	now := time.Now()
	var change func(*progress.Progress)
	var what string
	switch {
	case target == "all":
		change = func(p *progress.Progress) { *p = *progress.New(); p.Updated = now }
		what = "everything"
	case c.Lesson(target) != nil:
		change = func(p *progress.Progress) { p.ResetLesson(target, now) }
		what = "lesson " + target + " (pages, checkpoints, quiz, labs passed)"
	case c.Lab(target) != nil:
		change = func(p *progress.Progress) { p.ResetLab(target, now) }
		what = "lab " + target
	case knownExperiment(target):
		change = func(p *progress.Progress) { p.ResetExperiment(target, now) }
		what = "experiment " + target
	default:
		return Usagef("nothing called %q: give a lesson id, a lab id, an experiment name or all", target)
	}
	if _, err := progress.Update(path, change); err != nil {
		return fmt.Errorf("progress reset: %w", err)
	}
	fmt.Fprintf(env.Stdout, "Forgot %s.\n", what)
	return nil
}

func knownExperiment(name string) bool {
	for _, n := range knownExperiments() {
		if n == name {
			return true
		}
	}
	return false
}
