package tui

import (
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/content"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/lessons"
)

// TestEmbeddedCourseFits80x24 opens every page of the real course at 80x24
// and checks that glamour's rendering fits the text column, so no line of a
// lesson (a diagram, a table) is cut off at the right edge, and that every
// quiz question's screen fits.
func TestEmbeddedCourseFits80x24(t *testing.T) {
	if testing.Short() {
		t.Skip("renders the whole course")
	}
	course, probs := lessons.Load(lessons.Sources{Course: content.FS(), CourseRoot: "content"})
	if len(course.Lessons) == 0 {
		t.Fatalf("embedded course has no lessons: %v", probs)
	}
	h := newHarness(t, 80, 24, func(o *Options) { o.Course = course })
	for _, l := range course.Lessons {
		h.send(screen.OpenLesson{Lesson: l.ID, Page: 0})
		for p := range l.Pages {
			if p > 0 {
				h.keys("n")
			}
			out, ok := h.readerScreen().Rendered(p)
			if !ok {
				t.Fatalf("%s page %d not rendered", l.ID, p+1)
			}
			tw := h.readerScreen().TextWidth()
			for i, line := range strings.Split(out, "\n") {
				if w := ansi.StringWidth(line); w > tw {
					t.Errorf("%s page %d (%q) line %d is %d wide, the text column is %d: %q",
						l.Path, p+1, l.Pages[p].Title, i+1, w, tw, strings.TrimSpace(ansi.Strip(line)))
				}
			}
			h.checkFits()
		}
		if len(l.QuizQuestions()) == 0 {
			continue
		}
		h.keys("t")
		for range l.QuizQuestions() {
			h.checkFits()
			h.keys("enter") // a single choice takes the cursor's option
			if !h.quizScreen().Current().Answered() {
				// Numeric and empty answers need input; type the answer.
				q := h.quizScreen().Current().Asked()
				for _, r := range trimNumber(q.Answer) {
					h.keys(string(r))
				}
				h.keys("enter")
			}
			h.checkFits()
			h.keys("enter")
		}
		h.mustShow("Your score")
		h.keys("esc")
	}
}

func trimNumber(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// TestExperimentChooser: x on a lesson with several experiments lists
// them; a number opens that one.
func TestExperimentChooser(t *testing.T) {
	course, probs := lessons.Load(lessons.Sources{Course: content.FS(), CourseRoot: "content"})
	if len(probs) > 0 {
		t.Fatalf("course problems: %v", probs)
	}
	var n int
	var l *lessons.Lesson
	for i, x := range course.Lessons {
		if len(x.Experiments) > 1 {
			n, l = i, x
			break
		}
	}
	if l == nil {
		t.Skip("no lesson of the course has several experiments")
	}
	h := newHarness(t, 80, 24, func(o *Options) { o.Course = course })
	h.keys(string(rune('1'+n)), "x")
	h.mustShow("Which experiment?", "1  "+l.Experiments[0], "2  "+l.Experiments[1])
	h.checkFits()
	h.keys("esc")
	h.mustNotShow("Which experiment?")
	if h.state() != "home" {
		t.Fatalf("esc closed the home screen: %s", h.state())
	}
	h.keys("x", "2")
	h.mustShow("Experiment: " + l.Experiments[1])
}
