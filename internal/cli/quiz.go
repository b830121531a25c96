package cli

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/ownership-election/playground/lessons"
	"github.com/ownership-election/playground/quiz"
)

func init() {
	Register(&Command{
		Name:    "quiz",
		Usage:   "quiz --list | quiz ID --plain",
		Summary: "list the quizzes, or take one in plain text (stdin/stdout)",
		Run:     runQuiz,
	})
}

// runQuiz lists quizzes or runs one in plain text. Exit codes: 0 (also
// when input ends early), 1 if the course cannot be loaded, 2 bad usage.
func runQuiz(ctx context.Context, env *Env, args []string) error {
	fl := flag.NewFlagSet("quiz", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	list := fl.Bool("list", false, "list every quiz with its lesson and number of questions")
	plain := fl.Bool("plain", false, "ask on stdout, read one answer a line from stdin")
	// Accept flags before or after the quiz id: "quiz ID --plain".
	var ids []string
	for rest := args; ; {
		if err := fl.Parse(rest); err != nil {
			return Usagef("%v", err)
		}
		if fl.NArg() == 0 {
			break
		}
		ids = append(ids, fl.Arg(0))
		rest = fl.Args()[1:]
	}
	c, _, err := loadCourse(env, "")
	if err != nil {
		return err
	}
	switch {
	case *list && len(ids) == 0:
		return listQuizzes(env.Stdout, c)
	case *list:
		return Usagef("--list takes no quiz id")
	case len(ids) != 1:
		return Usagef("name one quiz: quiz ID --plain (see quiz --list)")
	}
	qz := c.Quiz(ids[0])
	if qz == nil {
		return Usagef("no quiz %q (see quiz --list)", ids[0])
	}
	if !*plain {
		// The quiz screen lives inside the course TUI, reached from its lesson.
		fmt.Fprintf(env.Stdout, "Take this quiz in the course (run playground and open lesson %02d, %s),\nor in plain text here:\n  playground quiz %s --plain\n",
			lessonOf(c, qz).Number, lessonOf(c, qz).Title, qz.ID)
		return nil
	}
	return takePlain(ctx, env.Stdin, env.Stdout, qz, learnerName(), !isTerminal(env.Stdin))
}

func lessonOf(c *lessons.Course, qz *quiz.Quiz) *lessons.Lesson {
	for _, l := range c.Lessons {
		if l.Quiz == qz {
			return l
		}
	}
	return &lessons.Lesson{}
}

func listQuizzes(w io.Writer, c *lessons.Course) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "QUIZ\tLESSON\tQUESTIONS")
	for _, l := range c.Lessons {
		if l.Quiz != nil {
			fmt.Fprintf(tw, "%s\t%02d %s\t%d\n", l.Quiz.ID, l.Number, l.ID, len(l.Quiz.Questions))
		}
	}
	return tw.Flush()
}

// learnerName seeds the per-learner option order.
func learnerName() string {
	for _, v := range []string{"PLAYGROUND_LEARNER", "USER", "USERNAME"} {
		if s := os.Getenv(v); s != "" {
			return s
		}
	}
	return "learner"
}

// takePlain asks every question of qz in turn and prints feedback and a
// final "score: N/M" line, N the fully right answers and M the questions.
// End of input stops early, still with the score line.
// With echo, each answer read is printed back, so a transcript of piped
// input reads like a session.
func takePlain(ctx context.Context, in io.Reader, out io.Writer, qz *quiz.Quiz, learner string, echo bool) error {
	sc := bufio.NewScanner(in)
	title := qz.Title
	if title == "" {
		title = qz.ID
	}
	fmt.Fprintf(out, "Quiz: %s (%d questions)\n", title, len(qz.Questions))
	right, asked := 0, 0
	var points float64
questions:
	for i, q := range qz.Questions {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		display := quiz.Shuffle(q, learner)
		fmt.Fprintf(out, "\nQuestion %d of %d (%s)\n", i+1, len(qz.Questions), kindLabel(q.Kind))
		fmt.Fprintln(out, strings.TrimSpace(q.Prompt))
		choices := q.Options
		if q.Kind == quiz.Order {
			choices = q.Items
		}
		if q.Kind != quiz.Numeric {
			for pos, idx := range display {
				fmt.Fprintf(out, "  %d) %s\n", pos+1, choices[idx].Text)
			}
		}
		var res quiz.Result
		for {
			fmt.Fprintf(out, "answer (%s): ", quiz.InputHint(q))
			if !sc.Scan() {
				fmt.Fprintln(out)
				break questions
			}
			if echo {
				fmt.Fprintln(out, sc.Text())
			}
			r, err := quiz.ParseInput(q, display, sc.Text())
			if err != nil {
				fmt.Fprintf(out, "  %v\n", err)
				continue
			}
			if res, err = quiz.Grade(q, r); err != nil {
				return fmt.Errorf("quiz %s: %w", qz.ID, err)
			}
			break
		}
		asked++
		points += res.Score
		if res.Correct {
			right++
		}
		printFeedback(out, q, display, res)
	}
	if asked < len(qz.Questions) {
		fmt.Fprintf(out, "input ended after %d of %d questions\n", asked, len(qz.Questions))
	}
	if asked > 0 && points != float64(right) {
		fmt.Fprintf(out, "points with partial credit: %s of %d\n", strconv.FormatFloat(points, 'f', 2, 64), len(qz.Questions))
	}
	fmt.Fprintf(out, "score: %d/%d\n", right, len(qz.Questions))
	return nil
}

// isTerminal reports whether r is an interactive terminal (whose own echo
// already shows what was typed).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func kindLabel(k quiz.Kind) string {
	switch k {
	case quiz.Single:
		return "pick one"
	case quiz.Multi:
		return "select all that apply"
	case quiz.Numeric:
		return "type a number"
	case quiz.Order:
		return "put in order"
	case quiz.Predict:
		return "predict the outcome"
	}
	return string(k)
}

func printFeedback(out io.Writer, q *quiz.Question, display []int, res quiz.Result) {
	switch {
	case res.Correct:
		fmt.Fprintln(out, "Right.")
	case res.Score > 0:
		fmt.Fprintf(out, "Partly right (%.0f%%).\n", res.Score*100)
	default:
		fmt.Fprintln(out, "Not quite.")
	}
	switch q.Kind {
	case quiz.Numeric:
		ans := strconv.FormatFloat(q.Answer, 'f', -1, 64)
		if q.Tolerance > 0 {
			ans += " ± " + strconv.FormatFloat(q.Tolerance, 'f', -1, 64)
		}
		if q.Unit != "" {
			ans += " " + q.Unit
		}
		fmt.Fprintf(out, "  The answer: %s. %s\n", ans, res.Explain)
	case quiz.Order:
		fmt.Fprintln(out, "  The right order:")
		for i, f := range res.Options {
			where := "you put it here too"
			if !f.Correct {
				where = fmt.Sprintf("you put it at %d", f.Position+1)
			}
			fmt.Fprintf(out, "  %d. %s (%s). %s\n", i+1, f.Text, where, f.Explain)
		}
	default:
		// In display order, so the numbers match what was asked.
		for pos, idx := range display {
			f := res.Options[idx]
			// Words, not symbols, so screen readers say what they mean.
			mark := ""
			switch {
			case f.Correct && f.Picked:
				mark = "your pick, right: "
			case f.Correct:
				mark = "right, not picked: "
			case f.Picked:
				mark = "your pick, wrong: "
			}
			fmt.Fprintf(out, "  %d) %s%s\n", pos+1, mark, f.Explain)
		}
	}
	if q.Kind == quiz.Predict && q.Experiment != "" {
		fmt.Fprintf(out, "  See it happen: playground experiment run %s\n", q.Experiment)
	}
	fmt.Fprintf(out, "  Takeaway: %s\n", res.Takeaway)
}
