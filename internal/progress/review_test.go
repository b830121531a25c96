package progress

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestMissedQuizQuestionsComeBackForReview: the misses of a quiz attempt
// are due ten minutes later, the right answers never enter review, and a
// retry right away that gets them right does not cut the wait.
func TestMissedQuizQuestionsComeBackForReview(t *testing.T) {
	p := New()
	p.RecordQuiz("l", QuizResult{Total: 3, Finished: t0, Answers: map[string]Answer{
		"a": {Correct: true, Score: 1}, "b": {Score: 0.5}, "c": {}}})
	if due := p.DueForReview(t0.Add(9 * time.Minute)); len(due) != 0 {
		t.Errorf("due after 9 min: %v", due)
	}
	p.RecordQuiz("l", QuizResult{Total: 3, Finished: t0.Add(time.Minute), Answers: map[string]Answer{
		"a": {Correct: true, Score: 1}, "b": {Correct: true, Score: 1}, "c": {Correct: true, Score: 1}}})
	if due := p.DueForReview(t0.Add(10 * time.Minute)); !slices.Equal(due, []string{"b", "c"}) {
		t.Errorf("due after 10 min: %v, want the misses b c", due)
	}
	p.RecordReview("b", true, t0.Add(11*time.Minute))
	if due := p.DueForReview(t0.Add(12 * time.Minute)); !slices.Equal(due, []string{"c"}) {
		t.Errorf("after b reviewed right: %v, want c", due)
	}
	if next, ok := p.NextReview(t0.Add(12 * time.Minute)); !ok || !next.Equal(t0.Add(11*time.Minute+24*time.Hour)) {
		t.Errorf("next review %v %v, want b a day after its review", next, ok)
	}
}

// TestCheckpointMissEntersReview: an inline checkpoint answered wrong is
// scheduled like a quiz miss.
func TestCheckpointMissEntersReview(t *testing.T) {
	p := New()
	p.RecordCheck("l", "q1", Answer{Response: "2", At: t0})
	p.RecordCheck("l", "q2", Answer{Response: "1", Correct: true, Score: 1, At: t0})
	if due := p.DueForReview(t0.Add(time.Hour)); !slices.Equal(due, []string{"q1"}) {
		t.Errorf("due: %v, want q1", due)
	}
}

// TestOldFileWithoutReviewLoads: a file written before review existed
// loads, and a review added to it saves and loads again.
func TestOldFileWithoutReviewLoads(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	old := `{"version":1,"lessons":{"l":{"pages_read":[0],"last_page":0,"best_quiz":0.5}},"last":{"lesson":"l","page":0},"updated":"2026-11-01T09:00:00Z"}`
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	p, n := Load(path, t0)
	if n != nil || p.Peek("l") == nil || len(p.Review) != 0 {
		t.Fatalf("old file: %v %+v", n, p)
	}
	if _, err := Update(path, func(p *Progress) { p.RecordReview("q", false, t0) }); err != nil {
		t.Fatal(err)
	}
	p, n = Load(path, t0)
	if n != nil || p.Peek("l").BestQuiz != 0.5 || !slices.Equal(p.DueForReview(t0.Add(time.Hour)), []string{"q"}) {
		t.Errorf("after a review was saved: %v %+v", n, p.Review)
	}
}

// TestMergeKeepsTheCardAnsweredLast: two programs' records of one card
// meet; the one answered last wins, and cards only one side has are kept.
func TestMergeKeepsTheCardAnsweredLast(t *testing.T) {
	a, b := New(), New()
	a.RecordReview("x", false, t0)
	a.RecordReview("only-a", false, t0)
	b.RecordReview("x", false, t0)
	b.RecordReview("x", true, t0.Add(11*time.Minute)) // reviewed right in the other program: box 1
	b.RecordReview("only-b", false, t0)
	a.Merge(b)
	if a.Review["x"].Box != 1 || len(a.Review) != 3 {
		t.Errorf("merged: %+v", a.Review)
	}
	b.Merge(a)
	if b.Review["x"].Box != 1 {
		t.Errorf("merged the other way: %+v", b.Review["x"])
	}
}

// TestHandEditedBoxIsClamped: a box out of the schedule is brought back.
func TestHandEditedBoxIsClamped(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	data := `{"version":1,"review":{"q":{"box":42,"due":"2026-11-01T09:00:00Z","seen":"2026-11-01T09:00:00Z"},"r":{"box":-3,"due":"2026-11-01T09:00:00Z","seen":"2026-11-01T09:00:00Z"}}}`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	p, n := Load(path, t0)
	if n != nil || p.Review["q"].Box != 4 || p.Review["r"].Box != 0 {
		t.Errorf("clamped: %v %+v", n, p.Review)
	}
}

func TestForgetReviewAndClone(t *testing.T) {
	p := New()
	p.RecordReview("q", false, t0)
	c := p.Clone()
	p.ForgetReview([]string{"q"}, t0)
	if len(p.Review) != 0 || len(c.Review) != 1 {
		t.Errorf("forget/clone: %+v / %+v", p.Review, c.Review)
	}
}
