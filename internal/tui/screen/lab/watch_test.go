package lab

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/lessons"
)

// watchedTest is a Watch on the fixture's lab, as the root would own it,
// started without running its commands: tests deliver its results.
func watchedTest(t *testing.T) *Watch {
	t.Helper()
	return watchedIn(t, fixtureRoot)
}

func watchedIn(t *testing.T, root string) *Watch {
	t.Helper()
	w := NewWatch(Options{Root: root, Now: func() time.Time { return fixedNow }})
	if cmd := w.Start(demoLab()); cmd == nil || !w.grading || w.Lab() != "00_demo" {
		t.Fatalf("Start: grading %v, lab %q", w.grading, w.Lab())
	}
	t.Cleanup(w.Close)
	return w
}

// watchGraded delivers r as the result of the watch's grade in flight and
// returns the messages its commands say at once (LabGraded, ...).
func watchGraded(t *testing.T, w *Watch, r report) tea.Cmd {
	t.Helper()
	if !w.grading {
		t.Fatal("no watch grade in flight")
	}
	return w.Update(gradeDoneMsg{seq: w.seq, report: r})
}

func watchStatus(w *Watch) string { return ansi.Strip(w.Status(*testStyles(), 80)) }

func TestWatchStatusSaysWhatItLastGraded(t *testing.T) {
	w := watchedTest(t)
	if got := watchStatus(w); got != "watch 00_demo: grading…" {
		t.Fatalf("while grading: %q", got)
	}
	cmd := watchGraded(t, w, failingReport())
	if got := watchStatus(w); got != "watch 00_demo: step 2/2 failing · 09:00" {
		t.Fatalf("after a failing grade: %q", got)
	}
	if msg := cmd(); msg != (screen.LabGraded{Lab: "00_demo", Status: "failing", Step: "step 2 (Double a number)"}) {
		t.Fatalf("the root is told %#v", msg)
	}

	// A save: grading again, then a pass that waits for its verification.
	w.Update(watchEventMsg{gen: w.gen, events: make(chan struct{})})
	if !w.grading || watchStatus(w) != "watch 00_demo: grading…" {
		t.Fatalf("a save did not re-grade: %q", watchStatus(w))
	}
	if cmd := watchGraded(t, w, passingReport()); cmd == nil {
		t.Fatal("a pass is not verified")
	}
	if got := watchStatus(w); got != "watch 00_demo: first run clean, verifying…" || w.Passed() || !w.Grading() {
		t.Fatalf("while verifying: %q", got)
	}
	cmd = w.Update(verifyDoneMsg{seq: w.seq, lab: &grade.Report{Status: grade.LabPassed}})
	if got := watchStatus(w); got != "watch 00_demo: ✓ passed (verified)" || !w.Passed() {
		t.Fatalf("after verification: %q", got)
	}
	if msg := cmd(); msg != (screen.LabPassed{Lab: "00_demo"}) {
		t.Fatalf("the root is told %#v", msg)
	}
	for width, want := range map[int]string{
		40: "watch 00_demo: ✓ passed (verified)",
		20: "00_demo ✓",
		6:  "00_de…",
	} {
		if got := ansi.Strip(w.Status(*testStyles(), width)); got != want {
			t.Fatalf("at width %d: %q, want %q", width, got, want)
		}
	}
}

func TestWatchStatusForBrokenRuns(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*report)
		want string
	}{
		{"build", func(r *report) { r.BuildErrors = []string{"demo.go:5: undefined: nn"} }, "watch 00_demo: does not compile · 09:00"},
		{"timeout", func(r *report) { r.TimedOut = true }, "watch 00_demo: timed out at step 2/2 · 09:00"},
		{"error", func(r *report) { r.Err = errFake }, "watch 00_demo: could not grade · 09:00"},
	} {
		w := watchedTest(t)
		r := failingReport()
		tc.edit(&r)
		watchGraded(t, w, r)
		if got := watchStatus(w); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestWatchDropsStaleResults(t *testing.T) {
	w := watchedTest(t)
	seq := w.seq
	w.Grade() // a save while grading: the first run is cancelled
	w.Update(gradeDoneMsg{seq: seq, report: passingReport()})
	if w.report != nil || !w.grading {
		t.Fatal("the cancelled run's result was taken")
	}
	gen := w.gen
	w.Stop()
	if w.Lab() != "" || w.grading || w.Status(*testStyles(), 80) != "" {
		t.Fatalf("Stop left watch mode on: %q", w.Status(*testStyles(), 80))
	}
	if cmd := w.Update(watchEventMsg{gen: gen, events: make(chan struct{})}); cmd != nil || w.grading {
		t.Fatal("a save after Stop graded")
	}
	if cmd := w.Update(watchClosedMsg{gen: gen}); cmd != nil {
		t.Fatal("the old watcher's end was reported after Stop")
	}
}

func TestWatcherThatCannotStartSaysWhy(t *testing.T) {
	w := watchedTest(t)
	cmd := w.Update(watchStartedMsg{gen: w.gen, err: errFake})
	if w.Lab() != "" {
		t.Fatal("watch mode still on")
	}
	if msg, ok := cmd().(WatchStopped); !ok || msg.Lab != "00_demo" || msg.Err != errFake {
		t.Fatalf("not told why: %#v", msg)
	}
}

// TestWatchedLabScreenShowsTheWatch: the screen of the watched lab shows
// the watch's latest grade when it opens, grades through the watch, and
// lets esc leave while a watch grade runs; closing it leaves watch mode on.
func TestWatchedLabScreenShowsTheWatch(t *testing.T) {
	w := watchedTest(t)
	watchGraded(t, w, failingReport())
	m := New(testContext(), Options{Lab: demoLab(), Root: fixtureRoot, Watch: w, Now: func() time.Time { return fixedNow }})
	m.SetSize(80, 24)
	m = runCmd(t, m, m.Init())
	v := view(m)
	for _, want := range []string{"● watching", "Graded at 09:00:00: 1 of 2 steps passed", "Double(21) = 21, want 42", "watching saves"} {
		if !strings.Contains(v, want) {
			t.Fatalf("the watched lab's screen lacks %q:\n%s", want, v)
		}
	}

	// g grades (enter, with a grade on screen, opens the step under the cursor).
	m, cmd := press(t, m, "g")
	if cmd == nil || !w.grading || !m.grading || m.cancel != nil {
		t.Fatalf("g did not grade through the watch (watch %v, screen %v, own run %v)", w.grading, m.grading, m.cancel != nil)
	}
	if m.Capturing() {
		t.Fatal("esc is held while a watch grade runs: the learner cannot leave")
	}
	if got := strings.Join(helpKeyNames(m), " "); got != "x w tab" {
		t.Fatalf("help while a watch grade runs: %q", got)
	}
	m, _ = press(t, m, "x")
	if w.grading || m.grading || w.Lab() != "00_demo" {
		t.Fatal("x did not cancel the watch grade, or stopped watch mode")
	}

	// The grade of a save reaches the screen through the root, which
	// gives the watch's messages to the watch first, then to the screens.
	w.Grade()
	r := passingReport()
	msg := gradeDoneMsg{seq: w.seq, report: r}
	w.Update(msg)
	m.Update(msg)
	if v := view(m); !strings.Contains(v, "First run clean") {
		t.Fatalf("the screen did not follow the watch:\n%s", v)
	}

	m.Close()
	if w.Lab() != "00_demo" {
		t.Fatal("closing the lab screen stopped the root's watch mode")
	}
	m = New(testContext(), Options{Lab: demoLab(), Root: fixtureRoot, Watch: w})
	m = runCmd(t, m, m.Init())
	m, _ = press(t, m, "w")
	if w.Lab() != "" || m.watching || !strings.Contains(view(m), "Watch mode off.") {
		t.Fatal("w on the watched lab did not stop watch mode")
	}
}

// TestOtherLabScreenNamesTheWatchedLab: one lab is watched at a time; the
// screen of another says which, and w moves watch mode to its lab.
func TestOtherLabScreenNamesTheWatchedLab(t *testing.T) {
	root := copyFixture(t)
	if err := os.CopyFS(filepath.Join(root, "labs/01_other"), os.DirFS(filepath.Join(root, "labs/00_demo"))); err != nil {
		t.Fatal(err)
	}
	w := watchedIn(t, root)
	other := lessons.Lab{ID: "01_other", Title: "Other", Lesson: "x", File: "demo.go", Steps: demoLab().Steps}
	m := New(testContext(), Options{Lab: other, Root: root, Watch: w, Now: func() time.Time { return fixedNow }})
	m.SetSize(80, 24)
	m = runCmd(t, m, m.Init())
	if v := view(m); !strings.Contains(v, "watching 00_demo") || strings.Contains(v, "● watching") {
		t.Fatalf("the header does not name the watched lab:\n%s", v)
	}
	_, cmd := press(t, m, "w")
	if cmd == nil || w.Lab() != "01_other" || !m.watching {
		t.Fatalf("w did not move watch mode: watching %q", w.Lab())
	}
	if v := view(m); !strings.Contains(v, "● watching") || strings.Contains(v, "00_demo") {
		t.Fatalf("the header does not say the move:\n%s", v)
	}
}

var errFake = errors.New("fake failure")

func helpKeyNames(m *Model) []string {
	var ks []string
	for _, b := range m.ShortHelp() {
		if b.Enabled() {
			ks = append(ks, b.Help().Key)
		}
	}
	return ks
}

// TestStopEndsTheFolderWatcher: the command waiting for saves returns
// once watch mode stops, so no goroutine outlives it.
func TestStopEndsTheFolderWatcher(t *testing.T) {
	w := NewWatch(Options{Root: copyFixture(t)})
	batch, ok := w.Start(demoLab())().(tea.BatchMsg)
	if !ok || len(batch) != 2 {
		t.Fatalf("Start should start the folder watcher and a grade: %#v", batch)
	}
	started, ok := batch[0]().(watchStartedMsg) // the grade (batch[1]) is not run
	if !ok || started.err != nil {
		t.Fatalf("the folder watcher did not start: %#v", started)
	}
	wait := w.Update(started)
	if wait == nil {
		t.Fatal("nothing waits for saves")
	}
	w.Stop()
	done := make(chan tea.Msg, 1)
	go func() { done <- wait() }()
	select {
	case msg := <-done:
		if _, ok := msg.(watchClosedMsg); !ok {
			t.Fatalf("the wait ended with %#v", msg)
		}
		if cmd := w.Update(msg); cmd != nil {
			t.Fatal("the end of a stopped watcher is reported as news")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the folder watcher outlived Stop")
	}
}

// TestScreenAndWatchTakeOnlyTheirOwnGrades: the screen and watch mode
// share one grading state machine and one kind of message, and both see
// every message; each takes only the grade it started.
func TestScreenAndWatchTakeOnlyTheirOwnGrades(t *testing.T) {
	w := NewWatch(Options{Root: fixtureRoot, Now: func() time.Time { return fixedNow }})
	other := demoLab()
	other.ID = "01_other"
	w.Start(other) // grading, its commands not run: the test delivers the results
	t.Cleanup(w.Close)
	m := New(testContext(), Options{Lab: demoLab(), Root: fixtureRoot, Watch: w, Now: func() time.Time { return fixedNow }})
	m.SetSize(80, 24)
	m = runCmd(t, m, m.Init())
	m, _ = press(t, m, "g")
	if !m.grading || m.seq == w.seq {
		t.Fatalf("the screen's grade did not start, or shares the watch's number %d", w.seq)
	}
	screenGrade := gradeDoneMsg{seq: m.seq, report: failingReport()}
	w.Update(screenGrade)
	if w.report != nil || !w.grading {
		t.Fatal("watch mode took the screen's grade")
	}
	watchGrade := gradeDoneMsg{seq: w.seq, report: passingReport()}
	m.Update(watchGrade)
	if m.report != nil || !m.grading {
		t.Fatal("the screen of another lab took the watch's grade")
	}
	m.Update(screenGrade)
	w.Update(watchGrade)
	if m.report == nil || m.report.allPassed() || m.grading || w.report == nil || !w.report.allPassed() {
		t.Fatal("the screen and the watch did not each take their own grade")
	}
}
