package lessons

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ownership-election/playground/quiz"
)

// crossCheck finds problems that span files: duplicate ids and references
// to quizzes, questions, labs, experiments and lessons that do not exist.
// Each relation is checked by its own function.
func crossCheck(c *Course, src Sources) []Problem {
	x := &checker{c: c, src: src, lessonAt: map[string]*Lesson{}}
	if src.Experiments != nil {
		x.experiments = map[string]bool{}
		for _, e := range src.Experiments {
			x.experiments[e] = true
		}
	}
	for _, lab := range c.Labs {
		x.labIDs = append(x.labIDs, lab.ID)
	}
	x.uniqueLessonIDs()
	x.uniqueQuizIDs()
	x.uniqueQuestionIDs()
	x.predictExperiments()
	x.labLessons()
	for _, l := range c.Lessons {
		x.prerequisites(l)
		x.lessonExperiments(l)
		x.lessonLabs(l)
		x.pageChecks(l)
		x.pageTries(l)
	}
	return x.probs
}

// checker holds what the cross-file checks share.
type checker struct {
	c           *Course
	src         Sources
	experiments map[string]bool // known names; nil when not checked
	labIDs      []string
	lessonAt    map[string]*Lesson // first lesson with each id
	probs       []Problem
}

func (x *checker) add(path string, line int, format string, args ...any) {
	x.probs = append(x.probs, Problem{Path: path, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// unknownExperiment reports whether name is checked and not known.
func (x *checker) unknownExperiment(name string) bool {
	return x.experiments != nil && !x.experiments[name]
}

// unknownLab reports whether lab ids are checked and id is not one.
func (x *checker) unknownLab(id string) bool {
	return x.src.Labs != nil && x.c.Lab(id) == nil
}

// uniqueLessonIDs: no two lessons share an id.
func (x *checker) uniqueLessonIDs() {
	for _, l := range x.c.Lessons {
		if l.ID == "" {
			continue
		}
		if first := x.lessonAt[l.ID]; first != nil {
			x.add(l.Path, l.line("id", ""), "lesson id %q is also used by %s", l.ID, first.Path)
		} else {
			x.lessonAt[l.ID] = l
		}
	}
}

// uniqueQuizIDs: no two quizzes share an id.
func (x *checker) uniqueQuizIDs() {
	quizAt := map[string]*Lesson{}
	for _, l := range x.c.Lessons {
		if l.Quiz == nil || l.Quiz.ID == "" {
			continue
		}
		if first := quizAt[l.Quiz.ID]; first != nil {
			x.add(l.Quiz.Path, 1, "quiz id %q is also used by %s", l.Quiz.ID, first.Quiz.Path)
		} else {
			quizAt[l.Quiz.ID] = l
		}
	}
}

// uniqueQuestionIDs: question ids are unique across the course (a quiz's
// own duplicates are reported by quiz.Parse).
func (x *checker) uniqueQuestionIDs() {
	type qref struct {
		l    *Lesson
		line int
	}
	questionAt := map[string]qref{}
	for _, l := range x.c.Lessons {
		if l.Quiz == nil {
			continue
		}
		for _, q := range l.Quiz.Questions {
			if q.ID == "" {
				continue
			}
			if first, dup := questionAt[q.ID]; dup && first.l != l {
				x.add(l.Quiz.Path, q.Line, "question id %q is also used by %s:%d", q.ID, first.l.Quiz.Path, first.line)
			} else if !dup {
				questionAt[q.ID] = qref{l, q.Line}
			}
		}
	}
}

// predictExperiments: a predict question names an experiment that exists.
func (x *checker) predictExperiments() {
	for _, l := range x.c.Lessons {
		if l.Quiz == nil {
			continue
		}
		for _, q := range l.Quiz.Questions {
			if q.Kind == quiz.Predict && q.Experiment != "" && x.unknownExperiment(q.Experiment) {
				x.add(l.Quiz.Path, q.Line, "question %s: experiment: unknown experiment %q%s", q.ID, q.Experiment, suggest(x.src.Experiments))
			}
		}
	}
}

// labLessons: a lab of this course names a lesson that lists it.
func (x *checker) labLessons() {
	if !x.src.OwnLabs {
		return
	}
	for _, lab := range x.c.Labs {
		switch l := x.lessonAt[lab.Lesson]; {
		case lab.Lesson == "":
		case l == nil:
			x.add(lab.Path, lab.lessonLine, "lab: lesson: unknown lesson id %q", lab.Lesson)
		case !slices.Contains(l.Labs, lab.ID):
			// The course map shows a lab under its lesson: both must agree.
			x.add(lab.Path, lab.lessonLine, "lab: lesson: %s does not list %s under labs in its front matter", lab.Lesson, lab.ID)
		}
	}
}

// prerequisites name earlier lessons.
func (x *checker) prerequisites(l *Lesson) {
	for _, pre := range l.Prerequisites {
		other := x.lessonAt[pre]
		switch {
		case other == nil:
			x.add(l.Path, l.line("prerequisites", pre), "front matter: prerequisites: unknown lesson id %q", pre)
		case other == l:
			x.add(l.Path, l.line("prerequisites", pre), "front matter: prerequisites: a lesson cannot require itself")
		case other.Number >= l.Number:
			x.add(l.Path, l.line("prerequisites", pre), "front matter: prerequisites: %q comes later in the course (lesson %02d)", pre, other.Number)
		}
	}
}

// lessonExperiments: the front matter's experiments exist.
func (x *checker) lessonExperiments(l *Lesson) {
	for _, e := range l.Experiments {
		if x.unknownExperiment(e) {
			x.add(l.Path, l.line("experiments", e), "front matter: experiments: unknown experiment %q%s", e, suggest(x.src.Experiments))
		}
	}
}

// lessonLabs: the front matter's labs exist.
func (x *checker) lessonLabs(l *Lesson) {
	for _, id := range l.Labs {
		if x.unknownLab(id) {
			x.add(l.Path, l.line("labs", id), "front matter: labs: unknown lab %q%s", id, suggest(x.labIDs))
		}
	}
}

// pageChecks: every @check names a question of the lesson's quiz. Without
// a quiz, its absence is already reported once.
func (x *checker) pageChecks(l *Lesson) {
	if l.Quiz == nil {
		return
	}
	for _, pg := range l.Pages {
		for i, id := range pg.Checks {
			if l.Quiz.Question(id) == nil {
				x.add(l.Path, pg.checkLines[i], "@check %s: no question with this id in the lesson's quiz.yaml", id)
			}
		}
	}
}

// pageTries: every @try names an experiment or lab that exists.
func (x *checker) pageTries(l *Lesson) {
	for _, pg := range l.Pages {
		for i, t := range pg.Tries {
			switch {
			case t.Kind == TryExperiment && x.unknownExperiment(t.Name):
				x.add(l.Path, pg.tryLines[i], "@try experiment %s: unknown experiment%s", t.Name, suggest(x.src.Experiments))
			case t.Kind == TryLab && x.unknownLab(t.Name):
				x.add(l.Path, pg.tryLines[i], "@try lab %s: unknown lab%s", t.Name, suggest(x.labIDs))
			}
		}
	}
}

// suggest lists the valid names after an unknown one, so the fix is at hand.
func suggest(names []string) string {
	if len(names) == 0 {
		return " (none are known)"
	}
	return " (known: " + strings.Join(names, ", ") + ")"
}
