package tui

import (
	"slices"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/internal/tui/screen/experiment"
	"github.com/ownership-election/playground/quiz"
)

// clockHarness is a harness whose clock the test moves.
func clockHarness(t *testing.T, w, h int) (*harness, *time.Time) {
	now := testNow
	hs := newHarness(t, w, h, func(o *Options) { o.Now = func() time.Time { return now } })
	return hs, &now
}

// TestReviewSessionFromTheMap: a quiz with two misses; the map says when
// they come back, then "r Review (2 due)"; r asks those two (options in
// another order than the quiz's), records each answer at once, offers no
// retry, and the map counts down again.
func TestReviewSessionFromTheMap(t *testing.T) {
	h, now := clockHarness(t, 80, 24)
	qz := quizOf(h)
	h.keys("t")
	h.keys(displayPos(qz.Questions[0], 0), "enter", "enter") // right
	h.keys(displayPos(qz.Questions[1], 1), "enter", "enter") // wrong
	h.keys("6", "enter", "enter")                            // right
	h.keys("enter", "enter", "enter")                        // order as shuffled: wrong; back home
	h.mustShow("Review: next in 10 min")
	h.keys("r")
	if h.state() != "home" {
		t.Fatalf("r with nothing due opened %s", h.state())
	}
	h.mustShow("Nothing to review now")
	*now = now.Add(10 * time.Minute)
	h.keys("down", "up") // any key draws the map again
	h.mustShow("r Review (2 due)")
	h.keys("r")
	h.mustShow("Review: 2 questions you missed before", "Question 1 of 2", "Tick the even numbers")
	shown := h.quizScreen().Current().Display()
	if equalInts(shown, quiz.Shuffle(qz.Questions[1], testLearner)) {
		t.Fatalf("the review shows the quiz's option order %v", shown)
	}
	h.keys(posIn(shown, 0), posIn(shown, 2), "enter") // right
	if c := h.savedProgress().Review["ts-evens"]; c.Box != 1 || !c.Due.Equal(now.Add(24*time.Hour)) {
		t.Fatalf("right in review: saved %+v, want box 1 due in a day", c)
	}
	h.keys("enter")
	h.mustShow("Question 2 of 2", "Put the counting in order.")
	h.keys("enter", "enter") // wrong again
	h.mustShow("Your score", "The 1 you missed come back in 10 minutes")
	h.mustNotShow("retries")
	h.checkFits()
	if c := h.savedProgress().Review["ts-order"]; c.Box != 0 || !c.Due.Equal(now.Add(10*time.Minute)) {
		t.Fatalf("missed in review: saved %+v", c)
	}
	if q := h.savedProgress().Peek("first-steps").Quiz; q.Score != 2 {
		t.Errorf("the review changed the lesson's quiz score: %v", q.Score)
	}
	h.keys("enter")
	h.mustShow("Review: next in 10 min")
}

// TestWrongPredictionComesBack: an experiment's prediction that its run
// did not bear out goes into review under the scenario's prediction id,
// and comes back asked with what that run did as its answer, with the
// experiment it is about and, once answered, what the run did and the key
// that runs it again (it came back as a bare prompt); a right one adds
// nothing.
func TestWrongPredictionComesBack(t *testing.T) {
	h, now := clockHarness(t, 80, 24)
	const id = "experiment/fencing/predict"
	did := "Off: the old owner's (its write is taken); on: the new owner's (refused)"
	h.send(screen.Predicted{Name: "fencing", Question: id, Right: false, Outcome: []string{did}})
	if c, ok := h.savedProgress().Review[id]; !ok || c.Box != 0 {
		t.Fatalf("wrong prediction: review %+v", h.savedProgress().Review)
	}
	*now = now.Add(11 * time.Minute)
	h.keys("down", "up")
	h.mustShow("r Review (1 due)")
	h.keys("r")
	h.mustShow("Once the old owner has woken", "Experiment fencing: A zombie owner's late write")
	h.checkFits()
	q := experiment.ReviewQuestion(id, []string{did})
	right := slices.IndexFunc(q.Options, func(o quiz.Option) bool { return o.Text == did })
	h.keys(posIn(h.quizScreen().Current().Display(), right), "enter")
	h.mustShow("In your run of fencing: Off: the old owner's", "x run the experiment")
	if c := h.savedProgress().Review[id]; c.Box != 1 {
		t.Fatalf("the run's outcome, picked in review: card %+v, want box 1", c)
	}
	h2, _ := clockHarness(t, 80, 24)
	h2.send(screen.Predicted{Name: "fencing", Question: id, Right: true, Outcome: []string{did}})
	if len(h2.savedProgress().Review) != 0 {
		t.Errorf("right prediction entered review: %+v", h2.savedProgress().Review)
	}
}

// TestReviewAtLargeSize: the review session and the map's review line
// at a large terminal.
func TestReviewAtLargeSize(t *testing.T) {
	h, now := clockHarness(t, 160, 45)
	h.send(screen.CheckAnswered{Lesson: "first-steps", Question: "ts-check-three", Answer: answerWrong()})
	*now = now.Add(time.Hour)
	h.keys("down", "up")
	h.mustShow("r Review (1 due)")
	h.keys("r")
	h.mustShow("Review: 1 question you missed before", "Which number is three?")
	h.checkFits()
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func answerWrong() progress.Answer { return progress.Answer{Response: "1", At: testNow} }
