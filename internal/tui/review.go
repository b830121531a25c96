package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/internal/tui/screen/experiment"
	"github.com/ownership-election/playground/internal/tui/screen/quiz"
	"github.com/ownership-election/playground/lessons"
	quizpkg "github.com/ownership-election/playground/quiz"
)

// openReview opens a review session of the questions due now, from every
// lesson, on the quiz screen.
func (m *Model) openReview() tea.Cmd {
	due := dueQuestions(m.course, m.prog, m.now())
	if len(due) == 0 {
		m.setNotice("Nothing to review now: missed questions come back 10 minutes after the miss.", false)
		return nil
	}
	return m.push(quiz.New(m.screenContext(), quiz.Options{Review: due}))
}

// dueQuestions are the questions due for review that the course still has.
func dueQuestions(c *lessons.Course, p *progress.Progress, now time.Time) []*quizpkg.Question {
	var out []*quizpkg.Question
	for _, id := range p.DueForReview(now) {
		if q, _ := c.Question(id); q != nil {
			out = append(out, q)
		} else if q := experimentReview(p, id); q != nil {
			out = append(out, q)
		}
	}
	return out
}

// predictedReview puts an experiment's prediction, as its run judged it,
// through the review schedule under the scenario's prediction id: a wrong
// one comes back, asked with what the run bore out as its answer.
func (m *Model) predictedReview(p screen.Predicted) func(*progress.Progress) {
	now := m.now()
	return func(pr *progress.Progress) {
		pr.RecordPrediction(p.Name, p.Right, now)
		if p.Question != "" {
			pr.RecordPredictOutcome(p.Name, p.Outcome)
			pr.RecordReview(p.Question, p.Right, now)
		}
	}
}

// experimentReview is the experiment prediction with review id id, asked
// again with the outcome the learner's judged run bore out; nil when id
// is none.
func experimentReview(p *progress.Progress, id string) *quizpkg.Question {
	for name, e := range p.Experiments {
		if q := experiment.ReviewQuestion(id, e.Outcome); q != nil && q.Experiment == name {
			return q
		}
	}
	return nil
}

// lessonQuestionIDs are the ids of every question of a lesson's quiz
// file (checkpoints too), whose review a reset of the lesson forgets.
func lessonQuestionIDs(c *lessons.Course, lessonID string) []string {
	l := c.Lesson(lessonID)
	if l == nil || l.Quiz == nil {
		return nil
	}
	ids := make([]string, 0, len(l.Quiz.Questions))
	for _, q := range l.Quiz.Questions {
		ids = append(ids, q.ID)
	}
	return ids
}

// quizFinished records a finished quiz round at the root's time (the root
// owns the clock: the review schedule counts from it).
func (m *Model) quizFinished(f screen.QuizFinished) tea.Cmd {
	r := f.Result
	r.Finished = m.now()
	r.Answers = make(map[string]progress.Answer, len(f.Result.Answers))
	for id, a := range f.Result.Answers {
		a.At = r.Finished
		r.Answers[id] = a
	}
	return m.progressChanged(func(p *progress.Progress) { p.RecordQuiz(f.Lesson, r) })
}

// lessonAfter is the lesson that follows l in the course, nil after the
// last.
func (m *Model) lessonAfter(l *lessons.Lesson) *lessons.Lesson {
	for i, x := range m.course.Lessons {
		if x == l && i+1 < len(m.course.Lessons) {
			return m.course.Lessons[i+1]
		}
	}
	return nil
}
