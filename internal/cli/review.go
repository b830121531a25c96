package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/review"
	"github.com/ownership-election/playground/internal/tui/text"
	"github.com/ownership-election/playground/lessons"
	"github.com/ownership-election/playground/quiz"
)

func init() {
	Register(&Command{
		Name:    "review",
		Usage:   "review [--plain]",
		Summary: "the questions you missed that are due again, listed or asked in plain text",
		Help: `Every question you miss (in a quiz, a checkpoint or an experiment's
prediction) comes back for review: 10 minutes later, then 1, 3, 7 and 21
days after each right answer; a miss starts it over. The course map shows
how many are due ("Review (N due)").

  (no flag)  list the questions due now and when the next one is
  --plain    ask the due questions on stdout, one answer a line from stdin;
             each answer is saved as it is given

Exit codes: 0 done (nothing due is no error), 1 input ended before the
last due question or the progress file could not be written, 2 bad usage,
130/143 stopped by Ctrl-C or SIGTERM.`,
		Run: runReview,
	})
}

// clock is the review commands' time; tests move it.
var clock = time.Now

// dueItem is a question due for review and the lesson it belongs to.
type dueItem struct {
	q      *quiz.Question
	lesson *lessons.Lesson
}

func runReview(ctx context.Context, env *Env, args []string) error {
	fl := flag.NewFlagSet("review", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	plain := fl.Bool("plain", false, "ask the due questions on stdout, read one answer a line from stdin")
	if err := fl.Parse(args); err != nil {
		return Usagef("%v", err)
	}
	if fl.NArg() > 0 {
		return Usagef("review takes no arguments: review [--plain]")
	}
	c, _, err := loadCourse(env, "")
	if err != nil {
		return err
	}
	path, err := progress.DefaultPath()
	if err != nil {
		return fmt.Errorf("review: %w", err)
	}
	p, notice := progress.Load(path, clock())
	if notice != nil {
		fmt.Fprintf(env.Stderr, "playground review: %s\n", notice)
	}
	due := dueQuestions(c, p, clock())
	if len(due) == 0 {
		fmt.Fprintln(env.Stdout, "Nothing to review now."+nextReviewLine(p, clock()))
		return nil
	}
	if !*plain {
		listDue(env.Stdout, due)
		return nil
	}
	return reviewPlain(ctx, env, path, due)
}

// dueQuestions are the questions due at now that the course still has.
func dueQuestions(c *lessons.Course, p *progress.Progress, now time.Time) []dueItem {
	var out []dueItem
	for _, id := range p.DueForReview(now) {
		if q, l := c.Question(id); q != nil {
			out = append(out, dueItem{q: q, lesson: l})
		}
	}
	return out
}

func listDue(w io.Writer, due []dueItem) {
	fmt.Fprintf(w, "%d question%s due for review:\n", len(due), plural(len(due)))
	for _, d := range due {
		prompt := text.Inline(strings.Join(strings.Fields(d.q.Prompt), " "))
		fmt.Fprintf(w, "  %02d %-28s %s\n", d.lesson.Number, d.q.ID, text.Truncate(prompt, 60))
	}
	fmt.Fprintln(w, "Answer them with: playground review --plain (or r on the course map)")
}

// reviewPlain asks every due question, saves each answer at once (so
// stopping half-way keeps what was answered), and says when each comes
// back.
func reviewPlain(ctx context.Context, env *Env, path string, due []dueItem) error {
	ask := &plainAsker{ctx: ctx, lines: readLines(ctx, env.Stdin, maxAnswer), out: env.Stdout, echo: !isTerminal(env.Stdin), what: "review"}
	fmt.Fprintf(env.Stdout, "Review: %d question%s due\n", len(due), plural(len(due)))
	right, asked := 0, 0
	for i, d := range due {
		head := fmt.Sprintf("Review %d of %d · lesson %02d %s", i+1, len(due), d.lesson.Number, d.lesson.Title)
		res, _, err := ask.ask(d.q, reviewOrder(d.q, env.Learner), head)
		if errors.Is(err, errInputEnded) {
			break
		}
		if err != nil {
			return err
		}
		asked++
		if res.Correct {
			right++
		}
		now := clock()
		disk, err := progress.Update(path, func(p *progress.Progress) { p.RecordReview(d.q.ID, res.Correct, now) })
		if err != nil {
			fmt.Fprintf(env.Stderr, "playground review: your answer to %s was not saved (%d answer%s before it were): %v\n", d.q.ID, asked-1, plural(asked-1), err)
			return &ExitError{Code: 1}
		}
		fmt.Fprintln(env.Stdout, "  "+comesBack(disk, d.q.ID, now))
	}
	fmt.Fprintf(env.Stdout, "\nreviewed: %d/%d right\n", right, asked)
	if asked < len(due) {
		fmt.Fprintf(env.Stdout, "input ended after %d of %d questions\n", asked, len(due))
		return &ExitError{Code: 1}
	}
	return nil
}

// reviewOrder is the option order for a review: another one than the
// quiz showed, so the answer is not remembered by its place.
func reviewOrder(q *quiz.Question, learner string) []int {
	if q.Kind == quiz.Numeric {
		return nil
	}
	return quiz.ShuffleAgain(q, learner, 1, quiz.Shuffle(q, learner))
}

// comesBack says when a question just reviewed is asked again.
func comesBack(p *progress.Progress, id string, now time.Time) string {
	c, ok := p.Review[id]
	switch {
	case !ok || c.Retired:
		return "Learnt: it leaves review."
	case c.Box == 0:
		return "It comes back in " + until(c.Due.Sub(now)) + "."
	}
	return fmt.Sprintf("Up to box %d: it comes back in %s.", c.Box+1, until(c.Due.Sub(now)))
}

// nextReviewLine is " The next question is due in 9 min." or "".
func nextReviewLine(p *progress.Progress, now time.Time) string {
	next, ok := p.NextReview(now)
	if !ok {
		return ""
	}
	return " The next question is due in " + until(next.Sub(now)) + "."
}

// until is a wait in the largest unit that fits: "9 min", "3 h", "2 days".
func until(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "less than a minute"
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Round(time.Minute)/time.Minute))
	case d < 20*time.Hour:
		return fmt.Sprintf("%d h", int(d.Round(time.Hour)/time.Hour))
	}
	days := int((d + 12*time.Hour) / (24 * time.Hour))
	return fmt.Sprintf("%d day%s", days, plural(days))
}

// recordPlainQuiz saves a quiz taken in plain text to the learner's
// progress, as the screens do: the answers to questions a page asks as
// checkpoints as those checkpoints, the others as an attempt at the
// lesson's quiz (the quiz screen's questions, so scores compare), and
// says which questions come back for review. A save that fails is said
// on stderr and fails the command (exit 1): the quiz was taken, but a
// script running it must not believe the answers are kept.
func recordPlainQuiz(env *Env, l *lessons.Lesson, all progress.QuizResult) error {
	if l.ID == "" {
		return nil // a quiz no lesson lists has nowhere to be recorded
	}
	now := clock()
	r := progress.QuizResult{QuizID: all.QuizID, Answers: map[string]progress.Answer{}, Total: len(l.QuizQuestions()), Finished: now}
	checks := map[string]progress.Answer{}
	for id, a := range all.Answers {
		a.At = now
		if l.Checkpoint(id) {
			checks[id] = a
			continue
		}
		r.Answers[id], r.Score = a, r.Score+a.Score
	}
	path, err := progress.DefaultPath()
	if err == nil {
		_, err = progress.Update(path, func(p *progress.Progress) {
			for id, a := range checks {
				p.RecordCheck(l.ID, id, a)
			}
			p.RecordQuiz(l.ID, r)
		})
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "playground quiz: your answers to quiz %s were not saved (no attempt, no checkpoint, no review recorded): %v\n", all.QuizID, err)
		return &ExitError{Code: 1}
	}
	switch n := len(all.Missed()); n {
	case 0:
	case 1:
		fmt.Fprintf(env.Stdout, "The question you missed comes back for review in %s: playground review --plain\n", until(review.Intervals[0]))
	default:
		fmt.Fprintf(env.Stdout, "The %d questions you missed come back for review in %s: playground review --plain\n", n, until(review.Intervals[0]))
	}
	return nil
}
