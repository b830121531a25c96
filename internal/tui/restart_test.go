package tui

import (
	"testing"

	"github.com/ownership-election/playground/internal/progress"
)

// TestSavedProgressShowsFromTheFirstFrame restarts the TUI on the progress
// file a first run saved: the course map shows the pages read and where to
// continue before any key, and c lands on the page the learner left.
func TestSavedProgressShowsFromTheFirstFrame(t *testing.T) {
	first := newHarness(t, 80, 24)
	first.keys("enter", "n", "q") // lesson 1, pages 1 and 2
	saved := first.savedProgress()
	if saved.Last.Lesson == "" {
		t.Fatal("the first run saved no place")
	}

	h := newHarness(t, 80, 24, func(o *Options) {
		o.Progress = saved
		o.ProgressPath = first.saved
	})
	h.mustShow("Continue: 01 First steps with a test course, page 3/3 (next unread)", " 2/3      –   0/1")
	h.mustNotShow("New here?")
	h.keys("c")
	h.mustShow("page 3/3")
	if got := h.savedProgress().Last; got != (progress.Position{Lesson: saved.Last.Lesson, Page: 2}) {
		t.Fatalf("after c the saved place is %+v, want page 3 of %s", got, saved.Last.Lesson)
	}
}
