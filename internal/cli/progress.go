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
	"github.com/ownership-election/playground/internal/progress/report"
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
  reset TARGET    forget a lesson (its number, 3, or its id), a lab (its
                  number in the course, 3.1, or its folder, 02_lock), an
                  experiment (its name) or everything (all); a number
                  alone is a lesson. Close the course first, or it
                  records what it still remembers again

Exit codes: 0 done, 1 the progress file could not be read or written,
2 bad usage or an unknown TARGET.`,
		Run: runProgress,
	})
}

func runProgress(ctx context.Context, env *Env, args []string) error {
	fs := flag.NewFlagSet("progress", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	args, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	course, _, err := loadCourse(env, "")
	if err != nil {
		return err
	}
	path, err := progress.DefaultPath()
	if err != nil {
		return fmt.Errorf("progress: %w", err)
	}
	if len(args) > 0 {
		if args[0] != "reset" || len(args) != 2 {
			return Usagef("progress reset TARGET (a lesson's number, a lab's number such as 3.1, an experiment's name, or all)")
		}
		return resetProgress(env, course, path, args[1])
	}
	p, notice := progress.Load(path, time.Now())
	if notice != nil {
		fmt.Fprintf(env.Stderr, "playground progress: %s\n", notice)
	}
	r := report.Build(course, p, path)
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	writeProgress(env.Stdout, r)
	return nil
}

func writeProgress(w io.Writer, r report.Report) {
	var b strings.Builder
	for i, l := range r.Lessons {
		fmt.Fprintf(&b, "%2d %s\n", i+1, l.Title)
		quiz := "quiz not taken"
		if l.QuizTaken {
			quiz = fmt.Sprintf("quiz best %.0f%% (first %.0f%%, %d attempt%s)", 100*l.QuizBest, 100*l.QuizFirst, l.QuizAttempts, plural(l.QuizAttempts))
		}
		fmt.Fprintf(&b, "   pages %d/%d · checkpoints %d/%d right · %s\n", l.PagesRead, l.Pages, l.ChecksRight, l.Checkpoints, quiz)
		for _, lab := range l.Labs {
			line := string(lab.Status)
			if lab.PassedOnce && lab.Status != progress.LabStatusPassed {
				line = "passed before, now " + line
			}
			if lab.Step != "" {
				line += " at " + lab.Step
			}
			if !lab.At.IsZero() {
				line += lab.At.Local().Format(" (01-02 15:04)")
			}
			fmt.Fprintf(&b, "   lab %-20s %s\n", strings.TrimSpace(lab.Number+" "+lab.ID), line)
			if r := lab.Runs; r != nil {
				fmt.Fprintf(&b, "       under faults: %s\n", report.RunsText(*r))
			}
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
	change, what := resetTarget(c, target, time.Now())
	if change == nil {
		return Usagef("nothing called %q. Name one of:\n%s", target, resetChoices(c))
	}
	if _, err := progress.Update(path, change); err != nil {
		fmt.Fprintf(env.Stderr, "playground progress: %s was not forgotten (the progress file is as it was): %v\n", what, err)
		return &ExitError{Code: 1}
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
