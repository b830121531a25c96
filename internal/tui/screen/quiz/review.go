package quiz

import (
	"fmt"
	"time"

	"github.com/ownership-election/playground/lessons"
	"github.com/ownership-election/playground/quiz"
)

// reviewLesson holds a review session's questions as the quiz of a lesson
// of its own, so the screen runs it as it runs any quiz.
func reviewLesson(qs []*quiz.Question) *lessons.Lesson {
	return &lessons.Lesson{ID: "", Title: "Review", Quiz: &quiz.Quiz{ID: "review", Title: "Review", Questions: qs}}
}

// display is the order to show x's options in this round: the learner's
// own order the first time in a quiz; another one on a retry (another
// than the last round showed) and in a review (another than the quiz
// showed), so the answer is not found again by its place.
func (q *Model) display(x *quiz.Question) []int {
	if x.Kind == quiz.Numeric {
		return nil
	}
	if prev, ok := q.shown[x.ID]; ok {
		return quiz.ShuffleAgain(x, q.learner, q.round, prev)
	}
	if q.review {
		return quiz.ShuffleAgain(x, q.learner, 1, quiz.Shuffle(x, q.learner))
	}
	return quiz.Shuffle(x, q.learner)
}

// canRetry is when r retries: the round is over, something was missed,
// and this is a quiz, not a review (whose misses come back on schedule).
func (q *Model) canRetry() bool { return q.finished && !q.review && len(q.missed()) > 0 }

// waitText is a review interval in words: "10 minutes", "1 day".
func waitText(d time.Duration) string {
	m := int(d.Minutes() + 0.5)
	if m < 60*24 {
		return fmt.Sprintf("%d minute%s", m, plural(m))
	}
	return fmt.Sprintf("%d day%s", m/(60*24), plural(m/(60*24)))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
