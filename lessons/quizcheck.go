package lessons

import "fmt"

// quizCheck keeps checkpoints and the end-of-lesson quiz apart: a question
// is asked by at most one @check, and the quiz that remains (the questions
// no page asks, Lesson.QuizQuestions) has at least src.QuizFloor of them.
func quizCheck(c *Course, src Sources) []Problem {
	var probs []Problem
	for _, l := range c.Lessons {
		if l.Quiz == nil {
			continue
		}
		checked := map[string]int{} // question id -> line of its first @check
		for _, pg := range l.Pages {
			for i, id := range pg.Checks {
				if first, dup := checked[id]; dup {
					probs = append(probs, Problem{Path: l.Path, Line: pg.checkLines[i],
						Msg: fmt.Sprintf("@check %s: already asked at line %d; a checkpoint is asked once", id, first)})
				} else {
					checked[id] = pg.checkLines[i]
				}
			}
		}
		if n := len(l.QuizQuestions()); n < src.QuizFloor {
			probs = append(probs, Problem{Path: l.Quiz.Path, Line: 1,
				Msg: fmt.Sprintf("the end-of-lesson quiz has %d of %d questions (the rest are checkpoints, asked on their pages only); it needs at least %d",
					n, len(l.Quiz.Questions), src.QuizFloor)})
		}
	}
	return probs
}
