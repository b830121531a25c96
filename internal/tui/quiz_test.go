package tui

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ownership-election/playground/quiz"
)

func quizOf(h *harness) *quiz.Quiz { return h.m.course.Lesson("first-steps").Quiz }

func TestQuizSingleChoiceFeedback(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("t")
	h.mustShow("Quiz: First steps quiz", "Question 1 of 4", "choose one", "Which number is two?")
	q := quizOf(h).Questions[0]
	h.keys(displayPos(q, 1), "enter") // the wrong answer, 3
	h.mustShow("✗ Not quite.", "Three comes after two.", "Two is written 2.", "Takeaway: Two is 2.")
	h.checkFits()
}

func TestQuizArrowsChooseAndEnterSubmits(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("t")
	q := quizOf(h).Questions[0]
	// Walk the cursor down to the right answer's row.
	want := int(displayPos(q, 0)[0] - '1')
	for range want {
		h.keys("down")
	}
	h.keys("enter")
	h.mustShow("✓ Correct.")
}

func TestQuizMultiTickByNumberAndSpace(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("t", "1", "enter", "enter") // answer q1, go to q2
	h.mustShow("Question 2 of 4", "select all that apply", "[ ]")
	q := quizOf(h).Questions[1]
	h.keys(displayPos(q, 0)) // tick 4 by number
	h.mustShow("[x]")
	// Move the cursor to 10 (arrows wrap around) and tick it with space.
	pos := int(displayPos(q, 2)[0] - '1')
	for h.quizScreen().Current().Cursor() != pos {
		h.keys("down")
	}
	h.keys("space", "enter")
	h.mustShow("✓ Correct.", "4 divides by 2.", "7 is odd.", "10 divides by 2.")
}

func TestQuizMultiPartialCredit(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("t", "1", "enter", "enter")
	q := quizOf(h).Questions[1]
	h.keys(displayPos(q, 0), "enter") // only 4: 2 of 3 options classified right
	h.mustShow("Partly right: 67% of the marks.")
}

func TestQuizNumericTyping(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("t", "1", "enter", "enter", "1", "enter", "enter")
	h.mustShow("Question 3 of 4", "type a number", "half of a 12 second TTL")
	h.keys("7", "backspace", "6")
	h.mustShow("> 6")
	// q and ? are text while typing, not quit or help.
	h.keys("q", "?")
	if h.quit || h.m.showHelp {
		t.Fatal("q or ? acted as a command while typing a number")
	}
	h.keys("enter")
	h.mustShow("✓ Correct.", "You answered 6 s; the answer is 6 s.", "12 / 2 = 6.")
}

func TestQuizNumericRejectsEmpty(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("t", "1", "enter", "enter", "1", "enter", "enter", "enter")
	h.mustShow("type a number (in s)")
	if h.quizScreen().Current().Answered() {
		t.Fatal("an empty numeric answer was graded")
	}
}

func TestQuizOrderReorder(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("t", "1", "enter", "enter", "1", "enter", "enter", "6", "enter", "enter")
	h.mustShow("Question 4 of 4", "put in order")
	h.solveOrder()
	h.mustShow("1. one", "2. two", "3. three")
	h.keys("enter")
	h.mustShow("✓ Correct.", "The right order", "Counting goes up.")
}

func TestQuizOrderWrongShowsPlaces(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("t", "1", "enter", "enter", "1", "enter", "enter", "6", "enter", "enter")
	q := quizOf(h).Questions[3]
	if isSorted(quiz.Shuffle(q, testLearner)) {
		t.Fatal("the shuffle shows the order already solved")
	}
	h.keys("enter") // submit the shuffled order as is
	h.mustShow("The right order", "you put it at")
	h.mustNotShow("✓ Correct.")
}

func isSorted(xs []int) bool {
	for i := range xs {
		if xs[i] != i {
			return false
		}
	}
	return true
}

func TestQuizScoreRetryMissedAndSave(t *testing.T) {
	h := newHarness(t, 80, 24)
	qz := quizOf(h)
	h.keys("t")
	h.keys(displayPos(qz.Questions[0], 0), "enter", "enter") // right
	h.keys(displayPos(qz.Questions[1], 1), "enter", "enter") // wrong: ticks 7
	h.keys("6", "enter", "enter")                            // right
	h.keys("enter", "enter")                                 // order as shuffled: wrong
	h.mustShow("Your score", "/ 4", "r retries the 2 you missed")
	saved := h.savedProgress().Lessons["first-steps"]
	if saved == nil || saved.Quiz == nil || saved.Quiz.Total != 4 {
		t.Fatalf("quiz not saved: %+v", saved)
	}
	if missed := saved.Quiz.Missed(); len(missed) != 2 || missed[0] != "ts-evens" || missed[1] != "ts-order" {
		t.Fatalf("saved missed = %v, want [ts-evens ts-order]", missed)
	}
	first := saved.Quiz.Score

	h.keys("r")
	h.mustShow("Question 1 of 2", "Tick the even numbers, the ones", "(retry 1)")
	// The retry shows the options in another order than the round before.
	shown := h.quizScreen().Current().Display()
	if slices.Equal(shown, quiz.Shuffle(qz.Questions[1], testLearner)) {
		t.Fatalf("the retry shows the options in the first round's order %v", shown)
	}
	h.keys(posIn(shown, 0), posIn(shown, 2), "enter", "enter")
	h.mustShow("Question 2 of 2", "Put the counting in order.")
	h.keys("enter", "enter")
	h.mustShow("Your score", "r retries the 1 you missed", "Best 75% · first attempt 50% · 2 attempts")
	saved = h.savedProgress().Lessons["first-steps"]
	if saved.Quiz.Score <= first || !saved.Quiz.Answers["ts-evens"].Correct || !saved.Quiz.Answers["ts-pick-two"].Correct {
		t.Fatalf("retry not merged: %+v (first score %v)", saved.Quiz, first)
	}
	if saved.BestQuiz != saved.Quiz.Share() {
		t.Fatalf("best %v, latest share %v", saved.BestQuiz, saved.Quiz.Share())
	}
	h.keys("enter")
	if h.state() != "home" {
		t.Fatalf("enter on the score should go back home, state %s", h.state())
	}
	// The map shows the first attempt and the best in the quiz column.
	h.mustShow(fmt.Sprintf(" 0/3   50→%d%%   0/1", int(saved.BestQuiz*100+0.5)))
}

// TestQuizAllRightOffersNoRetry: "r retries" is offered only when
// something was missed, on the score page and in its key help.
func TestQuizAllRightOffersNoRetry(t *testing.T) {
	h := newHarness(t, 80, 24)
	qz := quizOf(h)
	h.keys("t")
	h.keys(displayPos(qz.Questions[0], 0), "enter", "enter")
	h.keys(displayPos(qz.Questions[1], 0), displayPos(qz.Questions[1], 2), "enter", "enter")
	h.keys("6", "enter", "enter")
	h.solveOrder()
	h.keys("enter", "enter")
	h.mustShow("Your score", "every question right")
	h.mustNotShow("retries", "retry missed")
	h.keys("r")
	h.mustShow("Your score")
	h.mustNotShow("(retry 1)")
}

// solveOrder sorts the order question on screen by grabbing and moving
// rows, as a learner would: a selection sort driven only by keys.
func (h *harness) solveOrder() {
	for row := range len(h.quizScreen().Current().Arrangement()) {
		// Find the row holding item `row` and bring it up to `row`.
		from := row
		for i, item := range h.quizScreen().Current().Arrangement() {
			if item == row {
				from = i
			}
		}
		for h.quizScreen().Current().Cursor() < from {
			h.keys("down")
		}
		for h.quizScreen().Current().Cursor() > from {
			h.keys("up")
		}
		h.keys("space")
		for h.quizScreen().Current().Cursor() > row {
			h.keys("up")
		}
		h.keys("space")
	}
}

// posIn is the key that picks option idx in a display order.
func posIn(display []int, idx int) string {
	for pos, i := range display {
		if i == idx {
			return string(rune('1' + pos))
		}
	}
	panic("no such option")
}

func TestQuizFromHomeAndEsc(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("t", "esc")
	if h.state() != "home" {
		t.Fatal("esc from a quiz opened at home should go home")
	}
}

func TestQuizPredictOffersTheExperiment(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("2", "t", "1", "enter", "enter")
	h.mustShow("predict the outcome", "zombie's write")
	h.keys("1", "enter")
	h.mustShow("x runs the experiment fencing")
	h.keys("x")
	if h.state() != "experiment" {
		t.Fatalf("x after a predict question: state %s, want the experiment", h.state())
	}
	h.mustShow("Experiment: fencing")
	h.keys("esc")
	if h.state() != "quiz" {
		t.Fatalf("esc from the experiment: state %s, want back in the quiz", h.state())
	}
}

// TestQuizTextWithoutMarkdownMarks: prompts show inline code without its
// backticks, and the score page cuts a long prompt with an ellipsis.
func TestQuizTextWithoutMarkdownMarks(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("enter")
	h.mustShow("Which number is three?")
	h.keys("c")
	h.mustShow("Which number is three?")
	h.keys("esc", "esc")
	h.keys("t", "1", "enter", "enter", "1", "enter", "enter", "6", "enter", "enter", "enter", "enter")
	h.mustShow("Your score", "2. Tick the even numbers, the ones that divide by two with nothing left…")
	h.mustNotShow("`")
	h.checkFits()
}

// TestQuizEnterGoesToTheCourseMap: a quiz opened from the lesson reader
// ends with enter on the course map, as its help says ("course map");
// it went back to the lesson. A miss says that it comes back for review.
func TestQuizEnterGoesToTheCourseMap(t *testing.T) {
	h := newHarness(t, 80, 24)
	qz := quizOf(h)
	h.keys("enter")
	if h.state() != "reader" {
		t.Fatalf("enter on the map opened %s", h.state())
	}
	h.keys("t")
	h.keys(displayPos(qz.Questions[0], 1), "enter") // wrong
	h.mustShow("✗ Not quite. It comes back for review in 10 minutes.")
	h.keys("enter")
	h.keys(displayPos(qz.Questions[1], 0), displayPos(qz.Questions[1], 2), "enter")
	h.mustNotShow("comes back for review")
	h.keys("enter", "6", "enter", "enter", "enter", "enter")
	h.mustShow("Your score", "enter goes to the course map, esc back")
	h.keys("enter")
	if h.state() != "home" {
		t.Fatalf("enter on the score went to %s, not the course map", h.state())
	}
}
