package lessons

import (
	"fmt"
	"slices"
	"strings"
)

// crossCheck finds problems that span files: duplicate ids and references
// to quizzes, questions, labs, experiments and lessons that do not exist.
func crossCheck(c *Course, src Sources) []Problem {
	var probs []Problem
	add := func(path string, line int, format string, args ...any) {
		probs = append(probs, Problem{Path: path, Line: line, Msg: fmt.Sprintf(format, args...)})
	}
	var known map[string]bool
	if src.Experiments != nil {
		known = map[string]bool{}
		for _, e := range src.Experiments {
			known[e] = true
		}
	}
	lessonAt := map[string]*Lesson{}
	quizAt := map[string]*Lesson{}
	type qref struct {
		l    *Lesson
		line int
	}
	questionAt := map[string]qref{}
	for _, l := range c.Lessons {
		if l.ID != "" {
			if first := lessonAt[l.ID]; first != nil {
				add(l.Path, l.line("id", ""), "lesson id %q is also used by %s", l.ID, first.Path)
			} else {
				lessonAt[l.ID] = l
			}
		}
		if l.Quiz == nil {
			continue
		}
		if id := l.Quiz.ID; id != "" {
			if first := quizAt[id]; first != nil {
				add(l.Quiz.Path, 1, "quiz id %q is also used by %s", id, first.Quiz.Path)
			} else {
				quizAt[id] = l
			}
		}
		for _, q := range l.Quiz.Questions {
			if q.ID == "" {
				continue
			}
			if first, dup := questionAt[q.ID]; dup && first.l != l {
				add(l.Quiz.Path, q.Line, "question id %q is also used by %s:%d", q.ID, first.l.Quiz.Path, first.line)
			} else if !dup {
				questionAt[q.ID] = qref{l, q.Line}
			}
			if q.Kind == "predict" && q.Experiment != "" && known != nil && !known[q.Experiment] {
				add(l.Quiz.Path, q.Line, "question %s: experiment: unknown experiment %q%s", q.ID, q.Experiment, suggest(src.Experiments))
			}
		}
	}
	var labIDs []string
	for _, lab := range c.Labs {
		labIDs = append(labIDs, lab.ID)
		switch l := lessonAt[lab.Lesson]; {
		case lab.Lesson == "" || !src.OwnLabs:
		case l == nil:
			add(lab.Path, lab.lessonLine, "lab: lesson: unknown lesson id %q", lab.Lesson)
		case !slices.Contains(l.Labs, lab.ID):
			// The course map shows a lab under its lesson: both must agree.
			add(lab.Path, lab.lessonLine, "lab: lesson: %s does not list %s under labs in its front matter", lab.Lesson, lab.ID)
		}
	}
	for _, l := range c.Lessons {
		for _, pre := range l.Prerequisites {
			other := lessonAt[pre]
			switch {
			case other == nil:
				add(l.Path, l.line("prerequisites", pre), "front matter: prerequisites: unknown lesson id %q", pre)
			case other == l:
				add(l.Path, l.line("prerequisites", pre), "front matter: prerequisites: a lesson cannot require itself")
			case other.Number >= l.Number:
				add(l.Path, l.line("prerequisites", pre), "front matter: prerequisites: %q comes later in the course (lesson %02d)", pre, other.Number)
			}
		}
		for _, e := range l.Experiments {
			if known != nil && !known[e] {
				add(l.Path, l.line("experiments", e), "front matter: experiments: unknown experiment %q%s", e, suggest(src.Experiments))
			}
		}
		for _, id := range l.Labs {
			if src.Labs != nil && c.Lab(id) == nil {
				add(l.Path, l.line("labs", id), "front matter: labs: unknown lab %q%s", id, suggest(labIDs))
			}
		}
		for _, pg := range l.Pages {
			for i, id := range pg.Checks {
				// Without a quiz, its absence is already reported once.
				if l.Quiz != nil && l.Quiz.Question(id) == nil {
					add(l.Path, pg.checkLines[i], "@check %s: no question with this id in the lesson's quiz.yaml", id)
				}
			}
			for i, t := range pg.Tries {
				switch {
				case t.Kind == TryExperiment && known != nil && !known[t.Name]:
					add(l.Path, pg.tryLines[i], "@try experiment %s: unknown experiment%s", t.Name, suggest(src.Experiments))
				case t.Kind == TryLab && src.Labs != nil && c.Lab(t.Name) == nil:
					add(l.Path, pg.tryLines[i], "@try lab %s: unknown lab%s", t.Name, suggest(labIDs))
				}
			}
		}
	}
	return probs
}

// suggest lists the valid names after an unknown one, so the fix is at hand.
func suggest(names []string) string {
	if len(names) == 0 {
		return " (none are known)"
	}
	return " (known: " + strings.Join(names, ", ") + ")"
}
