package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/lessons"
)

// resetTarget resolves what progress reset is told to forget, as the
// learner sees it: a lesson by its number (3 or 03) or id, a lab by its
// number in the course (3.1, lab 3.1) or its folder (02_lock, 02, lock),
// an experiment by its name, or all. It returns the change and what it
// forgets in words, or a nil change when nothing answers to target.
func resetTarget(c *lessons.Course, target string, now time.Time) (func(*progress.Progress), string) {
	target = strings.TrimSpace(target)
	if target == "all" {
		return func(p *progress.Progress) { *p = *progress.New(); p.Updated = now }, "everything"
	}
	if l := lessonByName(c, target); l != nil {
		ids := lessonQuestions(l)
		return func(p *progress.Progress) { p.ResetLesson(l.ID, now); p.ForgetReview(ids, now) },
			fmt.Sprintf("lesson %d %s (pages, checkpoints, quiz, review, labs passed)", l.Number, l.Title)
	}
	if lab := c.FindLab(target); lab != nil {
		return func(p *progress.Progress) { p.ResetLab(lab.ID, now) }, c.LabName(lab.ID) + " (" + lab.ID + ")"
	}
	if name := currentExperimentName(target); knownExperiment(name) {
		return func(p *progress.Progress) { p.ResetExperiment(name, now) }, "experiment " + name
	}
	return nil, ""
}

// lessonByName is the lesson with that number (3 or 03) or id, or nil.
func lessonByName(c *lessons.Course, name string) *lessons.Lesson {
	if l := c.Lesson(name); l != nil {
		return l
	}
	n, err := strconv.Atoi(strings.TrimPrefix(name, "lesson "))
	if err != nil {
		return nil
	}
	for _, l := range c.Lessons {
		if l.Number == n {
			return l
		}
	}
	return nil
}

// lessonQuestions are the ids of every question in a lesson's quiz file.
func lessonQuestions(l *lessons.Lesson) []string {
	if l.Quiz == nil {
		return nil
	}
	ids := make([]string, 0, len(l.Quiz.Questions))
	for _, q := range l.Quiz.Questions {
		ids = append(ids, q.ID)
	}
	return ids
}

// resetChoices lists what progress reset accepts, a kind a line.
func resetChoices(c *lessons.Course) string {
	var ls []string
	for _, l := range c.Lessons {
		ls = append(ls, strconv.Itoa(l.Number))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  a lesson by its number: %s (or its id, as in progress --json)\n", strings.Join(ls, ", "))
	if labs := c.LabChoices(); len(labs) > 0 {
		fmt.Fprintf(&b, "  a lab by its number or folder: %s\n", strings.Join(labs, ", "))
	}
	if exps := knownExperiments(); len(exps) > 0 {
		fmt.Fprintf(&b, "  an experiment: %s\n", strings.Join(exps, ", "))
	}
	b.WriteString("  all: everything")
	return b.String()
}
