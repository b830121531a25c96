// Package lessons loads the course: lessons (front matter and pages),
// their quizzes and the lab manifests, from any fs.FS, validates the whole
// of it and returns it in course order. It knows nothing about terminals.
//
// A course FS has lessons/NN-slug/lesson.md and lessons/NN-slug/quiz.yaml
// at its root (content.FS() or os.DirFS of an instructor's folder); a labs
// FS has <lab-id>/lab.yaml, README.md and *_test.go (labs.Catalog()). The
// format is documented for instructors in content/README.md.
package lessons

import (
	"io/fs"
	"slices"

	"github.com/ownership-election/playground/quiz"
)

// Problem is one thing wrong with the course, printed "path:line: message".
type Problem = quiz.Problem

// Course is the whole course, lessons in order.
type Course struct {
	Lessons []*Lesson
	Labs    []*Lab // sorted by id
	// ExperimentTitles are the one-line titles of the experiments
	// lessons may name, by name (Sources.ExperimentTitles).
	ExperimentTitles map[string]string
}

// ExperimentTitle is the one-line title of the named experiment, "" when
// the course was not told it.
func (c *Course) ExperimentTitle(name string) string { return c.ExperimentTitles[name] }

// Lesson is one lesson folder.
type Lesson struct {
	Number        int    // from the folder name: 5 for 05-fencing-tokens
	ID            string // front matter id, e.g. "fencing-tokens"
	Title         string
	Summary       string   // one sentence for the course map
	Objectives    []string // what the learner can do afterwards
	Prerequisites []string // lesson ids
	Experiments   []string // experiment names
	Labs          []string // lab ids
	QuizID        string
	Quiz          *quiz.Quiz // the quiz.yaml next to lesson.md; nil if missing or unreadable
	Pages         []Page
	Path          string // lesson.md, as shown in problems (with the course root prefix)
	Dir           string // the lesson folder inside the course FS, e.g. "lessons/05-fencing-tokens"

	// lines maps a front matter field ("quiz"), or a list item
	// ("labs\x0004_fencing"), to its line in lesson.md, for problems.
	lines map[string]int
}

// line returns where a front matter field (or one item of a list field)
// is, falling back to the field, then to the front matter's first line.
func (l *Lesson) line(field, item string) int {
	if n := l.lines[field+"\x00"+item]; item != "" && n > 0 {
		return n
	}
	if n := l.lines[field]; n > 0 {
		return n
	}
	return 1
}

// Page is one screen of a lesson: the text from one level-1 heading to the
// next.
type Page struct {
	Title string // the heading text without "# "
	// Markdown is the page body after its heading line, with directive
	// lines removed and surrounding blank lines trimmed. Render it under
	// Title (for example as "# "+Title+"\n\n"+Markdown).
	Markdown string
	Checks   []string // @check question ids, in order
	Tries    []Try    // @try links, in order
	Line     int      // line of the heading in lesson.md

	checkLines, tryLines []int // line of each directive, for problems
}

// TryKind is what a @try directive links to.
type TryKind string

// The kinds of @try links.
const (
	TryExperiment TryKind = "experiment"
	TryLab        TryKind = "lab"
)

// Try is a "try it" link at the end of a page.
type Try struct {
	Kind TryKind
	Name string // experiment name or lab id
}

// Lab is one lab's manifest (labs/<id>/lab.yaml).
type Lab struct {
	ID     string // folder name, e.g. "04_fencing"
	Title  string
	Lesson string // lesson id
	File   string // the stub the learner edits, e.g. "fencing.go"
	Steps  []Step
	README string // the lab's README.md (Markdown), "" if absent
	Path   string // lab.yaml, as shown in problems

	lessonLine, fileLine int // lines of the lesson and file fields, for problems
}

// Step is one graded step of a lab: one test function and its hints.
type Step struct {
	Test  string // e.g. "TestStep1_RejectsLowerToken"
	Title string
	Hints []string // from gentle to direct; at least one
}

// Sources says where a course comes from and what it may refer to.
type Sources struct {
	// Course holds lessons/NN-slug/{lesson.md,quiz.yaml}.
	Course fs.FS
	// CourseRoot is put before course paths in problems and Lesson.Path,
	// e.g. "content" for the embedded course or the --content DIR.
	CourseRoot string
	// Labs holds <id>/lab.yaml, <id>/README.md and <id>/*_test.go. When
	// nil, no labs are loaded and lab references are not checked.
	Labs fs.FS
	// LabsRoot is put before lab paths in problems, e.g. "labs".
	LabsRoot string
	// OwnLabs says the labs belong to this course (the built-in one), so
	// each lab's lesson field must name a lesson here that lists the lab.
	// Leave it false for an instructor's course that reuses some labs.
	OwnLabs bool
	// Experiments are the known experiment names. When nil, experiment
	// references are not checked.
	Experiments []string
	// ExperimentTitles are the experiments' one-line titles, by name, for
	// screens that list a lesson's experiments (Course.ExperimentTitle).
	ExperimentTitles map[string]string
	// RenamedExperiments maps the names experiments went by before they
	// were renamed to their current names: a lesson that names one by an
	// old name loads as if it named the current one.
	RenamedExperiments map[string]string
	// QuizFloor is the fewest questions each lesson's end-of-lesson quiz
	// (Lesson.QuizQuestions) must have; 0 sets no floor. The built-in
	// course sets content.QuizFloor.
	QuizFloor int
}

// Lesson returns the lesson with the given id, or nil.
func (c *Course) Lesson(id string) *Lesson {
	for _, l := range c.Lessons {
		if l.ID == id {
			return l
		}
	}
	return nil
}

// Lab returns the lab with the given id, or nil.
func (c *Course) Lab(id string) *Lab {
	for _, l := range c.Labs {
		if l.ID == id {
			return l
		}
	}
	return nil
}

// Quiz returns the quiz with the given id, or nil.
func (c *Course) Quiz(id string) *quiz.Quiz {
	for _, l := range c.Lessons {
		if l.Quiz != nil && l.Quiz.ID == id {
			return l.Quiz
		}
	}
	return nil
}

// Question returns the question with the given id (ids are unique across
// the course) and the lesson whose quiz holds it, or nil, nil.
func (c *Course) Question(id string) (*quiz.Question, *Lesson) {
	for _, l := range c.Lessons {
		if l.Quiz == nil {
			continue
		}
		if q := l.Quiz.Question(id); q != nil {
			return q, l
		}
	}
	return nil, nil
}

// Checkpoint reports whether a page of the lesson asks the question with
// this id inline (a @check directive).
func (l *Lesson) Checkpoint(id string) bool {
	for _, pg := range l.Pages {
		if slices.Contains(pg.Checks, id) {
			return true
		}
	}
	return false
}

// QuizQuestions is the end-of-lesson quiz: the questions of quiz.yaml that
// no page asks as a checkpoint, in file order. A checkpoint checks the page
// just read; the quiz asks new questions, so none is asked twice.
func (l *Lesson) QuizQuestions() []*quiz.Question {
	if l.Quiz == nil {
		return nil
	}
	var out []*quiz.Question
	for _, q := range l.Quiz.Questions {
		if !l.Checkpoint(q.ID) {
			out = append(out, q)
		}
	}
	return out
}

// QuestionCount is the number of questions in all quizzes.
func (c *Course) QuestionCount() int {
	n := 0
	for _, l := range c.Lessons {
		if l.Quiz != nil {
			n += len(l.Quiz.Questions)
		}
	}
	return n
}
