package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/lessons"
	"github.com/ownership-election/playground/quiz"
)

func init() {
	Register(&Command{
		Name:    "quiz",
		Usage:   "quiz --list | quiz ID --plain",
		Summary: "list the quizzes, or take one in plain text (stdin/stdout)",
		Help: `Flags:
  --list    list every quiz with its lesson and number of questions
  --plain   ask on stdout and read one answer a line from stdin

Exit codes: 0 the quiz was taken to the end (whatever the score) and
saved, 1 input ended before the last question, the answers could not be
saved (stderr says so) or the course could not be loaded, 2 bad usage,
130/143 stopped by Ctrl-C or SIGTERM.`,
		Run: runQuiz,
	})
}

// runQuiz lists quizzes or runs one in plain text. Exit codes: 0, 1 if
// input ends before the last question, the answers cannot be saved or the
// course cannot be loaded, 2 bad usage.
func runQuiz(ctx context.Context, env *Env, args []string) error {
	fl := flag.NewFlagSet("quiz", flag.ContinueOnError)
	list := fl.Bool("list", false, "list every quiz with its lesson and number of questions")
	plain := fl.Bool("plain", false, "ask on stdout, read one answer a line from stdin")
	ids, err := parseFlags(fl, args)
	if err != nil {
		return err
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
	res, err := takePlain(ctx, env.Stdin, env.Stdout, qz, env.Learner, !isTerminal(env.Stdin))
	if err != nil {
		return err
	}
	return recordPlainQuiz(env, lessonOf(c, qz), *res)
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

// maxAnswer is the longest answer line read; anything longer is refused
// (the longest real answer, an order of a few dozen items, is far shorter).
const maxAnswer = 4096

// takePlain asks every question of qz in turn and prints feedback and a
// final "score: N/M" line, N the fully right answers and M the questions.
// End of input stops early, still with the score line, and fails the
// command. With echo, each answer read is printed back (control characters
// left out), so a transcript of piped input reads like a session. A
// cancelled ctx (Ctrl-C) stops it at once, even while it waits for input.
// A quiz taken to the end is returned for the learner's progress.
func takePlain(ctx context.Context, in io.Reader, out io.Writer, qz *quiz.Quiz, learner string, echo bool) (*progress.QuizResult, error) {
	ask := &plainAsker{ctx: ctx, lines: readLines(ctx, in, maxAnswer), out: out, echo: echo, what: "quiz " + qz.ID}
	title := qz.Title
	if title == "" {
		title = qz.ID
	}
	fmt.Fprintf(out, "Quiz: %s (%d questions)\n", title, len(qz.Questions))
	rec := &progress.QuizResult{QuizID: qz.ID, Answers: map[string]progress.Answer{}, Total: len(qz.Questions)}
	right, asked := 0, 0
	for i, q := range qz.Questions {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		head := fmt.Sprintf("Question %d of %d", i+1, len(qz.Questions))
		res, a, err := ask.ask(q, quiz.Shuffle(q, learner), head)
		if errors.Is(err, errInputEnded) {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				fmt.Fprintf(out, "\nstopped after %d of %d questions\n", asked, len(qz.Questions))
			}
			return nil, err
		}
		asked++
		rec.Answers[q.ID], rec.Score = a, rec.Score+res.Score
		if res.Correct {
			right++
		}
	}
	if asked > 0 && rec.Score != float64(right) {
		fmt.Fprintf(out, "points with partial credit: %s of %d\n", strconv.FormatFloat(rec.Score, 'f', 2, 64), len(qz.Questions))
	}
	if asked < len(qz.Questions) {
		fmt.Fprintf(out, "input ended after %d of %d questions\n", asked, len(qz.Questions))
		fmt.Fprintf(out, "score: %d/%d\n", right, len(qz.Questions))
		return nil, &ExitError{Code: 1}
	}
	fmt.Fprintf(out, "score: %d/%d\n", right, len(qz.Questions))
	return rec, nil
}

// errInputEnded says input ended before the question had an answer.
var errInputEnded = errors.New("input ended")

// plainAsker asks questions in plain text: on out, with answers read a
// line at a time from lines.
type plainAsker struct {
	ctx   context.Context
	lines <-chan line
	out   io.Writer
	echo  bool
	what  string // "quiz ID" or "review", for errors
}

// ask prints head, q's prompt and its choices in display order, reads
// lines until one is a valid answer, prints the feedback, and returns the
// grade and the answer as progress records it. It fails with
// errInputEnded at the end of input and with ctx's error when cancelled.
func (a *plainAsker) ask(q *quiz.Question, display []int, head string) (quiz.Result, progress.Answer, error) {
	fmt.Fprintf(a.out, "\n%s (%s)\n", head, q.Kind.Instruction())
	fmt.Fprintln(a.out, strings.TrimSpace(q.Prompt))
	choices := q.Options
	if q.Kind == quiz.Order {
		choices = q.Items
	}
	if q.Kind != quiz.Numeric {
		for pos, idx := range display {
			fmt.Fprintf(a.out, "  %d) %s\n", pos+1, choices[idx].Text)
		}
	}
	for {
		text, err := a.readAnswer(q)
		if err != nil {
			return quiz.Result{}, progress.Answer{}, err
		}
		r, err := quiz.ParseInput(q, display, text)
		if err != nil {
			fmt.Fprintf(a.out, "  %v\n", err)
			continue
		}
		res, err := quiz.Grade(q, r)
		if err != nil {
			return quiz.Result{}, progress.Answer{}, fmt.Errorf("%s: %w", a.what, err)
		}
		printFeedback(a.out, q, display, res)
		return res, progress.Answer{Response: r.Text(q), Score: res.Score, Correct: res.Correct}, nil
	}
}

// readAnswer prompts for an answer and reads one line that is not too
// long, echoing it when asked to.
func (a *plainAsker) readAnswer(q *quiz.Question) (string, error) {
	for {
		fmt.Fprintf(a.out, "answer (%s): ", quiz.InputHint(q))
		var ln line
		select {
		case <-a.ctx.Done():
			return "", a.ctx.Err()
		case l, ok := <-a.lines:
			if !ok {
				fmt.Fprintln(a.out)
				return "", errInputEnded
			}
			ln = l
		}
		if ln.err != nil {
			return "", fmt.Errorf("%s: read answer: %w", a.what, ln.err)
		}
		if a.echo {
			fmt.Fprintln(a.out, printable(ln.text, 120))
		}
		if ln.tooLong {
			fmt.Fprintf(a.out, "  answer too long (over %d bytes); %s\n", maxAnswer, quiz.InputHint(q))
			continue
		}
		return ln.text, nil
	}
}

// line is one line of input: its text without the line end, or tooLong
// when it had more than the limit (text then holds the start), or the
// read error that ended input.
type line struct {
	text    string
	tooLong bool
	err     error
}

// readLines reads in line by line in the background, so the reader can
// wait for a line and for ctx at once; the channel closes at end of input.
// Lines longer than limit are reported as tooLong and skipped to their
// end, however long they are, without holding them in memory.
func readLines(ctx context.Context, in io.Reader, limit int) <-chan line {
	ch := make(chan line)
	go func() {
		defer close(ch)
		br := bufio.NewReaderSize(in, limit+1)
		for {
			l, err := readLine(br, limit)
			if err == io.EOF && l.text == "" && !l.tooLong {
				return
			}
			if err != nil && err != io.EOF {
				l.err = err
			}
			select {
			case ch <- l:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}

// readLine reads one line of at most limit bytes (without "\n" or "\r\n").
func readLine(br *bufio.Reader, limit int) (line, error) {
	var l line
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if !l.tooLong {
			buf = append(buf, chunk...)
			if len(bytes.TrimRight(buf, "\r\n")) > limit {
				l.tooLong = true
				buf = buf[:limit]
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		l.text = strings.TrimRight(string(buf), "\r\n")
		return l, err
	}
}

// printable is s for echoing to a terminal: control characters (escape
// sequences among them) and invalid UTF-8 become "?", and anything past
// max runes is cut with "...".
func printable(s string, max int) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == max {
			b.WriteString("...")
			break
		}
		n++
		if r == utf8.RuneError || (unicode.IsControl(r) && r != '\t') {
			r = '?'
		}
		b.WriteRune(r)
	}
	return b.String()
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
