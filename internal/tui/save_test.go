package tui

import (
	"os"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/tui/screen"
)

// pagesRead is how many pages of the first lesson p has read, plus 10
// per quiz attempt finished.
func pagesRead(p *progress.Progress) int {
	if l := p.Peek("first-steps"); l != nil {
		return len(l.PagesRead) + 10*l.Attempts
	}
	return 0
}

func pagesOnDisk(t *testing.T, path string) int {
	t.Helper()
	p, notice := progress.Load(path, testNow)
	if notice != nil {
		t.Fatal(notice)
	}
	return pagesRead(p)
}

func quizDone() screen.QuizFinished {
	return screen.QuizFinished{Lesson: "first-steps", Result: progress.QuizResult{QuizID: "first-steps", Score: 1, Total: 2, Finished: testNow}}
}

// checkSaveFailure turns pages while saving fails, then once it works
// again: nothing read while the disk was full is lost, from the screen or
// from the file, and a reload of the older file does not replace it.
func checkSaveFailure(t *testing.T, h *harness, fail, recover func()) {
	t.Helper()
	h.send(screen.PageShown{Lesson: "first-steps", Page: 0})
	fail()
	h.send(screen.PageShown{Lesson: "first-steps", Page: 1})
	h.send(screen.PageShown{Lesson: "first-steps", Page: 2})
	h.send(quizDone())
	h.mustShow("could not save progress")
	if got := pagesRead(h.m.prog); got != 13 {
		t.Fatalf("%d pages (+10 a quiz) on screen after the failed saves, want 13", got)
	}
	if got := pagesOnDisk(t, h.saved); got != 1 {
		t.Fatalf("%d pages in the file while saving fails, want 1", got)
	}
	// The file watch reads the older file: it must not replace the
	// changes still waiting.
	h.send(h.m.reloadProgressCmd()())
	if got := pagesRead(h.m.prog); got != 13 {
		t.Fatalf("a reload of the file dropped progress: %d on screen, want 13", got)
	}
	recover()
	h.send(screen.PageShown{Lesson: "first-steps", Page: 1}) // read again: no new page
	if got := pagesOnDisk(t, h.saved); got != 13 {
		t.Fatalf("%d in the file after saving works again, want 13", got)
	}
	if got := pagesRead(h.m.prog); got != 13 {
		t.Fatalf("%d on screen after the save, want 13", got)
	}
	h.mustShow("progress saved")
	// A change whose save fails last is written at exit.
	fail()
	h.send(quizDone())
	recover()
	if n, err := h.m.FlushProgress(); n != 0 || err != nil {
		t.Fatalf("flush at exit: %d left, %v", n, err)
	}
	if got := pagesOnDisk(t, h.saved); got != 23 {
		t.Fatalf("%d in the file after the exit's flush, want 23 (the second quiz)", got)
	}
}

// A file system that fails every write while it is "full".
func TestFailedSaveKeepsChanges(t *testing.T) {
	h := newHarness(t, 80, 24)
	var full atomic.Bool
	h.m.saver.update = func(path string, change func(*progress.Progress)) (*progress.Progress, error) {
		if full.Load() {
			return nil, &os.PathError{Op: "write", Path: path, Err: syscall.ENOSPC}
		}
		return progress.Update(path, change)
	}
	checkSaveFailure(t, h, func() { full.Store(true) }, func() { full.Store(false) })
}
