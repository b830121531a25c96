package quiz

import (
	"regexp"
	"strings"
	"testing"

	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/internal/tui/screen/screentest"
)

// optionNumber is the number the view shows before an option's text
// (options are shuffled per learner).
func optionNumber(t *testing.T, view, text string) string {
	t.Helper()
	m := regexp.MustCompile(`(\d) \( \) ` + regexp.QuoteMeta(text)).FindStringSubmatch(view)
	if m == nil {
		t.Fatalf("no option %q on screen:\n%s", text, view)
	}
	return m[1]
}

// TestUpdateAnswersScoresAndRetries: a right answer and a wrong one get
// their feedback, the wrong predict question offers its experiment, the
// end of the round is sent to the root with its score, and a retry asks
// only the missed question.
func TestUpdateAnswersScoresAndRetries(t *testing.T) {
	c := screentest.Course(t)
	ctx := screentest.Context(c)
	d := screentest.New(t, New(ctx, Options{Lesson: c.Lesson("second-thoughts")}), ctx, 80, 24)
	if v := d.View(); !strings.Contains(v, "Is this the second lesson?") {
		t.Fatalf("first question not shown:\n%s", v)
	}
	if got := d.S.Status(); !strings.HasPrefix(got, "question 1/2") {
		t.Fatalf("status %q", got)
	}

	d.Press(optionNumber(t, d.View(), "Yes"), "enter")
	if v := d.View(); !strings.Contains(v, "✓ Correct.") || !strings.Contains(v, "enter: next question") {
		t.Fatalf("no feedback for the right answer:\n%s", v)
	}
	d.Press("enter")
	d.Press(optionNumber(t, d.View(), "It is accepted"), "enter")
	if v := d.View(); !strings.Contains(v, "✗ Not quite.") || !strings.Contains(v, "runs the experiment fencing") {
		t.Fatalf("no feedback or experiment for the wrong prediction:\n%s", v)
	}
	d.Press("x")
	if open, ok := screentest.Last[screen.OpenExperiment](d); !ok || open.Name != "fencing" {
		t.Fatalf("x sent %v, want OpenExperiment fencing", d.Sent)
	}

	d.Press("enter")
	done, ok := screentest.Last[screen.QuizFinished](d)
	if !ok || done.Lesson != "second-thoughts" || done.Result.Score != 1 || done.Result.Total != 2 {
		t.Fatalf("round end sent %+v (ok %v), want score 1 of 2", done, ok)
	}
	if v := d.View(); !strings.Contains(v, "Your score") || !strings.Contains(v, "1 / 2") {
		t.Fatalf("no score:\n%s", v)
	}

	d.Press("r")
	if v := d.View(); !strings.Contains(v, "zombie's write") || strings.Contains(v, "second lesson?") {
		t.Fatalf("retry does not ask only the missed question:\n%s", v)
	}
	if got := d.S.Title(); !strings.Contains(got, "(retry 1)") {
		t.Fatalf("title %q does not say it is a retry", got)
	}
}

// TestUpdateNumericTakesTyping: a numeric question takes ? and q as
// text (Typing), and a wrong number is marked wrong.
func TestUpdateNumericTakesTyping(t *testing.T) {
	c := screentest.Course(t)
	ctx := screentest.Context(c)
	q := New(ctx, Options{Lesson: c.Lesson("first-steps")})
	d := screentest.New(t, q, ctx, 80, 24)
	for !strings.Contains(d.View(), "half of a 12 second TTL") {
		if strings.Contains(d.View(), "Your score") {
			t.Fatal("the numeric question never came")
		}
		d.Press("1", "enter", "enter") // any answer, then next
	}
	if !d.S.Typing() {
		t.Fatal("a numeric question does not take typing")
	}
	d.Press("7", "enter")
	if v := d.View(); !strings.Contains(v, "✗ Not quite.") {
		t.Fatalf("7 for 6 not marked wrong:\n%s", v)
	}
	if d.S.Typing() {
		t.Fatal("an answered question still takes typing")
	}
}
