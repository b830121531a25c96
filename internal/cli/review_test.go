package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/quiz"
)

// atClock sets the review commands' clock for the test.
func atClock(t *testing.T, at *time.Time) {
	saved := clock
	clock = func() time.Time { return *at }
	t.Cleanup(func() { clock = saved })
}

// TestPlainQuizMistakesComeBackInReview is the loop end to end: a plain
// quiz answered with three mistakes saves them, review has nothing due
// until ten minutes later, then review --plain asks exactly those three;
// the one missed again comes back in 10 min, the two right in a day.
func TestPlainQuizMistakesComeBackInReview(t *testing.T) {
	state := t.TempDir()
	t.Setenv("PLAYGROUND_STATE_DIR", state)
	t.Setenv("PLAYGROUND_USER", "tester")
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	atClock(t, &now)
	in, err := os.ReadFile("../../content/testdata/plain-answers.txt")
	if err != nil {
		t.Fatal(err)
	}
	code, out, _ := run(t, string(in), "--content", okCourse, "quiz", "second-go", "--plain")
	if code != 0 || !strings.HasSuffix(out, "score: 1/4\nThe 3 questions you missed come back for review in 10 min: playground review --plain\n") {
		t.Fatalf("quiz: exit %d\n%s", code, out)
	}
	now = now.Add(9 * time.Minute)
	code, out, _ = run(t, "", "--content", okCourse, "review", "--plain")
	if code != 0 || out != "Nothing to review now. The next question is due in 1 min.\n" {
		t.Errorf("review after 9 min: exit %d %q", code, out)
	}
	now = now.Add(time.Minute)
	code, out, _ = run(t, "", "--content", okCourse, "review")
	for _, id := range []string{"which-need-owner", "min-ttl", "zombie-order"} {
		if code != 0 || !strings.Contains(out, id) || strings.Contains(out, "predict-fence") {
			t.Errorf("review lists %s? exit %d\n%s", id, code, out)
		}
	}
	answers := reviewAnswers(t, []string{"min-ttl", "which-need-owner", "zombie-order"}, map[string]bool{"min-ttl": true})
	code, out, _ = run(t, answers, "--content", okCourse, "review", "--plain")
	if code != 0 {
		t.Fatalf("review --plain: exit %d\n%s", code, out)
	}
	for _, want := range []string{"Review: 3 questions due\n", "Review 1 of 3 · lesson 02", "Review 3 of 3 ·",
		"Not quite.\n", "  It comes back in 10 min.\n", "  Up to box 2: it comes back in 1 day.\n", "\nreviewed: 2/3 right\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("review --plain lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "predict-fence") || strings.Count(out, "Right.") != 2 {
		t.Errorf("asked something else than the three misses:\n%s", out)
	}
	p, _ := progress.Load(filepath.Join(state, progress.FileName), now)
	if p.Review["min-ttl"].Box != 0 || p.Review["zombie-order"].Box != 1 || p.Review["which-need-owner"].Box != 1 {
		t.Errorf("saved boxes: %+v", p.Review)
	}
}

// reviewAnswers types the answers for the due questions in the order
// review asks them (longest overdue, then by id): right ones, or a wrong
// one for the ids in wrong.
func reviewAnswers(t *testing.T, ids []string, wrong map[string]bool) string {
	c, _, err := loadCourse(&Env{ContentDir: okCourse}, "")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, id := range ids {
		q, _ := c.Question(id)
		if wrong[id] {
			b.WriteString("999\n") // every wrong answer here is a number
			continue
		}
		b.WriteString(rightAnswer(q, reviewOrder(q, "tester")) + "\n")
	}
	return b.String()
}

// TestReviewOrderDiffers: a review shows the options in another order than
// the quiz did.
func TestReviewOrderDiffers(t *testing.T) {
	c, _, err := loadCourse(&Env{ContentDir: okCourse}, "")
	if err != nil {
		t.Fatal(err)
	}
	q, _ := c.Question("which-need-owner")
	if got, was := reviewOrder(q, "tester"), quiz.Shuffle(q, "tester"); slices.Equal(got, was) {
		t.Errorf("review order %v is the quiz's %v", got, was)
	}
}

func TestReviewUsage(t *testing.T) {
	code, _, errOut := run(t, "", "--content", okCourse, "review", "extra")
	if code != 2 || !strings.Contains(errOut, "review takes no arguments") {
		t.Errorf("review extra: exit %d %q", code, errOut)
	}
}

// TestPlainQuizSavesLikeTheScreens: a plain quiz asks every question of
// the quiz file; the ones a page asks as checkpoints are saved as those
// checkpoints, the rest as an attempt at the lesson's quiz, scored over
// the quiz screen's questions, so the map's percentages compare.
func TestPlainQuizSavesLikeTheScreens(t *testing.T) {
	state := t.TempDir()
	t.Setenv("PLAYGROUND_STATE_DIR", state)
	t.Setenv("PLAYGROUND_USER", "tester")
	c, _, err := loadCourse(&Env{}, "")
	if err != nil {
		t.Fatal(err)
	}
	l := c.Lessons[0]
	var in strings.Builder
	checks := 0
	for _, q := range l.Quiz.Questions {
		in.WriteString(rightAnswer(q, quiz.Shuffle(q, "tester")) + "\n")
		if l.Checkpoint(q.ID) {
			checks++
		}
	}
	if checks == 0 || checks == len(l.Quiz.Questions) {
		t.Fatalf("lesson 1 has %d checkpoints of %d questions: the test needs both kinds", checks, len(l.Quiz.Questions))
	}
	if code, out, _ := run(t, in.String(), "quiz", l.Quiz.ID, "--plain"); code != 0 {
		t.Fatalf("quiz: exit %d\n%s", code, out)
	}
	p, _ := progress.Load(filepath.Join(state, progress.FileName), time.Now())
	rec := p.Peek(l.ID)
	if rec == nil || rec.Quiz == nil || rec.Quiz.Total != len(l.QuizQuestions()) || rec.BestQuiz != 1 || len(rec.Quiz.Answers) != len(l.QuizQuestions()) {
		t.Fatalf("saved quiz: %+v", rec)
	}
	if len(rec.Checks) != checks || len(p.Review) != 0 {
		t.Errorf("saved %d checkpoints (want %d), review %v", len(rec.Checks), checks, p.Review)
	}
}
