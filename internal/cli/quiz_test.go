package cli

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ownership-election/playground/quiz"
)

const okCourse = "../../content/testdata/course-ok"

func TestQuizList(t *testing.T) {
	code, out, _ := run(t, "", "--content", okCourse, "quiz", "--list")
	want := "QUIZ         LESSON          QUESTIONS\n" +
		"first-steps  01 first-steps  1\n" +
		"second-go    02 second-go    4\n"
	if code != 0 || out != want {
		t.Errorf("quiz --list exited %d:\n%s\nwant:\n%s", code, out, want)
	}
}

// TestQuizPlainTranscript answers from a file (a right answer, a blank
// line, a partly right multi, a wrong number, a bad order then the order as
// shown, which scores nothing) and compares the whole session with the
// recorded transcript.
func TestQuizPlainTranscript(t *testing.T) {
	t.Setenv("PLAYGROUND_USER", "tester")
	in, err := os.ReadFile("../../content/testdata/plain-answers.txt")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../content/testdata/plain-transcript.txt")
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, string(in), "--content", okCourse, "quiz", "second-go", "--plain")
	if code != 0 || out != string(want) || errOut != "" {
		t.Errorf("exit %d, stderr %q, output:\n%s\nwant:\n%s", code, errOut, out, want)
	}
	for _, line := range []string{"  \"abc\" is not a whole number; type all numbers 1 to 3 in the right order, like 3 1 2\n",
		"Partly right (33%).\n", "  The answer: 19 s. 2 x 5 + 9 = 19.\n"} {
		if !strings.Contains(out, line) {
			t.Errorf("output lacks %q", line)
		}
	}
	if !strings.HasSuffix(out, "\nscore: 1/4\nThe 3 questions you missed come back for review in 10 min: playground review --plain\n") {
		t.Errorf("the last lines are not the score and the review to come")
	}
}

func TestQuizPlainAllRightAndEOF(t *testing.T) {
	t.Setenv("PLAYGROUND_USER", "tester")
	// From the transcript's display order: predict 2; multi 1,2; 19; 2 3 1.
	code, out, _ := run(t, "2\n1,2\n19\n2 3 1\n", "--content", okCourse, "quiz", "--plain", "second-go")
	if code != 0 || !strings.HasSuffix(out, "\nscore: 4/4\n") || strings.Contains(out, "Not quite") {
		t.Errorf("all right: exit %d:\n%s", code, out)
	}
	eof, err := os.ReadFile("../../content/testdata/plain-eof.txt")
	if err != nil {
		t.Fatal(err)
	}
	code, out, _ = run(t, string(eof), "--content", okCourse, "quiz", "second-go", "--plain")
	if code != 1 || !strings.HasSuffix(out, "input ended after 1 of 4 questions\nscore: 1/4\n") {
		t.Errorf("early EOF: exit %d:\n%s", code, out)
	}
}

func TestQuizUsage(t *testing.T) {
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"quiz"}, 2, "name one quiz"},
		{[]string{"quiz", "nope", "--plain"}, 2, `no quiz "nope"`},
		{[]string{"quiz", "--list", "second-go"}, 2, "--list takes no quiz id"},
		{[]string{"quiz", "--bogus"}, 2, "flag provided but not defined"},
	}
	for _, tc := range cases {
		code, _, errOut := run(t, "", append([]string{"--content", okCourse}, tc.args...)...)
		if code != tc.code || !strings.Contains(errOut, tc.msg) {
			t.Errorf("%v: exit %d, stderr %q", tc.args, code, errOut)
		}
	}
	code, out, _ := run(t, "", "--content", okCourse, "quiz", "second-go")
	if code != 0 || !strings.Contains(out, "playground quiz second-go --plain") {
		t.Errorf("without --plain: exit %d, %q", code, out)
	}
}

// TestQuizPlainEmbeddedAllRight answers every embedded quiz perfectly,
// working out the typed answers from the learner's shuffled order, and
// expects full marks: every answer key in the course can be scored.
func TestQuizPlainEmbeddedAllRight(t *testing.T) {
	t.Setenv("PLAYGROUND_USER", "tester")
	c, _, err := loadCourse(&Env{}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range c.Lessons {
		if l.Quiz == nil {
			continue
		}
		var in strings.Builder
		for _, q := range l.Quiz.Questions {
			in.WriteString(rightAnswer(q, quiz.Shuffle(q, "tester")) + "\n")
		}
		code, out, _ := run(t, in.String(), "quiz", l.Quiz.ID, "--plain")
		want := fmt.Sprintf("\nscore: %d/%d\n", len(l.Quiz.Questions), len(l.Quiz.Questions))
		if code != 0 || !strings.HasSuffix(out, want) {
			t.Errorf("quiz %s: exit %d, output ends %q", l.Quiz.ID, code, out[max(0, len(out)-200):])
		}
	}
}

// rightAnswer types the correct answer to q as shown in display order.
func rightAnswer(q *quiz.Question, display []int) string {
	if q.Kind == quiz.Numeric {
		return strconv.FormatFloat(q.Answer, 'f', -1, 64)
	}
	posOf := map[int]int{}
	for pos, idx := range display {
		posOf[idx] = pos + 1
	}
	var nums []string
	if q.Kind == quiz.Order {
		for i := range q.Items {
			nums = append(nums, strconv.Itoa(posOf[i]))
		}
		return strings.Join(nums, " ")
	}
	for _, i := range q.Correct() {
		nums = append(nums, strconv.Itoa(posOf[i]))
	}
	return strings.Join(nums, ",")
}
