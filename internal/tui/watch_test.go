package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/tui/screen/lab"
	"github.com/ownership-election/playground/lessons"
)

// watchCheckout writes a checkout with two tiny labs: 01_cas (its first
// step passes, its second does not) and 02_next. It returns the root and
// the course that names them.
func watchCheckout(t *testing.T) (string, *lessons.Course) {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"go.mod":             "module example.com/watchcourse\n\ngo 1.26\n",
		"labs/01_cas/cas.go": "package cas\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Double(n int) int { return n }\n",
		"labs/01_cas/cas_test.go": `package cas

import "testing"

func TestStep1_Adds(t *testing.T) {
	if Add(2, 3) != 5 {
		t.Fatal("Add(2, 3) != 5")
	}
}

func TestStep2_Doubles(t *testing.T) {
	if got := Double(21); got != 42 {
		t.Fatalf("Double(21) = %d, want 42", got)
	}
}
`,
		"labs/02_next/next.go": "package next\n\nfunc Triple(n int) int { return n }\n",
		"labs/02_next/next_test.go": `package next

import "testing"

func TestStep1_Triples(t *testing.T) {
	if got := Triple(2); got != 6 {
		t.Fatalf("Triple(2) = %d, want 6", got)
	}
}
`,
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := loadTestCourse(t)
	c.Labs = []*lessons.Lab{
		{ID: "01_cas", Title: "CAS", Lesson: "first-steps", File: "cas.go", Steps: []lessons.Step{
			{Test: "TestStep1_Adds", Title: "Add", Hints: []string{"+"}},
			{Test: "TestStep2_Doubles", Title: "Double", Hints: []string{"n + n"}},
		}},
		{ID: "02_next", Title: "Next", Lesson: "second-thoughts", File: "next.go", Steps: []lessons.Step{
			{Test: "TestStep1_Triples", Title: "Triple", Hints: []string{"3 * n"}},
		}},
	}
	return root, c
}

// waitScreen waits until one full repaint shows every string in what. A
// status line that changes in the background is sent as a diff of the
// cells that changed, so the test keeps asking for full repaints.
func waitScreen(t *testing.T, tm *teatest.TestModel, what ...string) {
	t.Helper()
	last := time.Time{}
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		out := plainOutput(b)
		found := true
		for _, w := range what {
			found = found && strings.Contains(out, w)
		}
		if !found && time.Since(last) > 300*time.Millisecond {
			tm.Send(tea.ClearScreen())
			last = time.Now()
		}
		return found
	}, teatest.WithDuration(120*time.Second), teatest.WithCheckInterval(50*time.Millisecond))
}

// TestFlowWatchFollowsTheLearner: watch mode goes on after the learner
// leaves the lab screen, grades a save made from the course map, says
// what it graded in the status line, offers the next lab once the watched
// one passes, and o opens that lab and moves the watch to it; the last
// lab's pass says the course's labs are done, and w stops watch mode.
func TestFlowWatchFollowsTheLearner(t *testing.T) {
	if testing.Short() {
		t.Skip("grades labs with go test")
	}
	root, course := watchCheckout(t)
	m := New(Options{
		Course: course, Learner: testLearner, Now: func() time.Time { return testNow },
		ProgressPath: filepath.Join(t.TempDir(), progress.FileName),
		Lab:          lab.Options{Root: root, Debounce: 50 * time.Millisecond, Course: grade.NewCourse(os.DirFS(root))},
	})
	tm := teatest.NewTestModel(t, m,
		teatest.WithInitialTermSize(80, 24),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))

	waitScreen(t, tm, "New here?")
	tm.Send(keyMsg("l"))
	waitScreen(t, tm, "Lab 1.1 · CAS")
	tm.Send(keyMsg("w"))
	waitScreen(t, tm, "● watching", "watch 01_cas: step 2/2 failing · 09:00")

	// Back on the course map, watch mode goes on and says what it graded.
	tm.Send(keyMsg("esc"))
	waitScreen(t, tm, "New here?", "watch 01_cas: step 2/2 failing · 09:00")
	// Coming back to the watched lab shows the watch's grade.
	tm.Send(keyMsg("l"))
	waitScreen(t, tm, "● watching", "1 of 2 steps passed", "Double(21) = 21, want 42")
	tm.Send(keyMsg("esc"))
	waitScreen(t, tm, "New here?")

	// A save made while the course map is on screen is graded, verified,
	// and the next lab is offered.
	fixed := "package cas\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Double(n int) int { return n + n }\n"
	if err := os.WriteFile(filepath.Join(root, "labs/01_cas/cas.go"), []byte(fixed), 0o644); err != nil {
		t.Fatal(err)
	}
	waitScreen(t, tm, "lab 1.1 passed and verified ✓ · press o to open lab 02_next")
	tm.Send(keyMsg("j")) // any key ends the notice; the offer stays
	waitScreen(t, tm, "watch 01_cas: ✓ passed · o opens 02_next")

	tm.Send(keyMsg("o"))
	waitScreen(t, tm, "Lab 02_next", "● watching", "watch 02_next: step 1/1 failing")

	// The last lab not passed yet: its pass says the course's labs are done.
	tripled := "package next\n\nfunc Triple(n int) int { return 3 * n }\n"
	if err := os.WriteFile(filepath.Join(root, "labs/02_next/next.go"), []byte(tripled), 0o644); err != nil {
		t.Fatal(err)
	}
	waitScreen(t, tm, "lab 02_next passed and verified ✓ · every lab of the course passes now")
	tm.Send(keyMsg("j"))
	waitScreen(t, tm, "watch 02_next: ✓ passed · every lab passes")
	tm.Send(keyMsg("o")) // nothing left to open
	tm.Send(keyMsg("w"))
	waitScreen(t, tm, "Watch mode off.")

	tm.Send(keyMsg("ctrl+c"))
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Model)
	if final.watch.Lab() != "" {
		t.Fatalf("watch mode still on after quitting (%s)", final.watch.Lab())
	}
	if !final.labSolved("01_cas") || !final.labSolved("02_next") {
		t.Fatalf("progress: %+v", final.prog.Labs)
	}
	if s, ok := final.top().(*lab.Model); !ok || s.Lab().ID != "02_next" {
		t.Fatalf("the top screen is %s, want lab 02_next", stateOf(final))
	}
	for i, l := range strings.Split(ansi.Strip(final.View().Content), "\n") {
		if w := ansi.StringWidth(l); w > 80 {
			t.Fatalf("line %d is %d wide: %q", i+1, w, l)
		}
	}
}

// TestNextLabIsTheNextNotPassed: the offer after a pass is the next lab in
// course order whose latest grade is not a verified pass, wrapping around;
// none once every lab passes.
func TestNextLabIsTheNextNotPassed(t *testing.T) {
	_, c := watchCheckout(t)
	c.Labs = append(c.Labs, &lessons.Lab{ID: "00_first", Title: "First", Lesson: "first-steps"})
	c.Lesson("first-steps").Labs = []string{"00_first", "01_cas"}
	h := newHarness(t, 80, 24, func(o *Options) { o.Course = c })
	m := &h.m
	if got := m.labOrder(); strings.Join(got, " ") != "00_first 01_cas 02_next" {
		t.Fatalf("course order %v", got)
	}
	pass := func(lesson, id string, status progress.LabStatus) {
		m.prog.RecordLabGrade(lesson, id, progress.LabGrade{Status: status, At: testNow})
	}
	if got := m.nextLab("01_cas"); got != "02_next" {
		t.Fatalf("after 01_cas: %q, want 02_next", got)
	}
	pass("second-thoughts", "02_next", progress.LabStatusPassed)
	if got := m.nextLab("01_cas"); got != "00_first" {
		t.Fatalf("after 01_cas with 02_next passed: %q, want 00_first (wrapping around)", got)
	}
	// Passed once but failing now is not solved.
	pass("first-steps", "00_first", progress.LabStatusPassed)
	pass("first-steps", "00_first", "failing")
	if got := m.nextLab("01_cas"); got != "00_first" {
		t.Fatalf("a lab failing now is not offered: %q", got)
	}
	pass("first-steps", "00_first", progress.LabStatusPassed)
	if got := m.nextLab("01_cas"); got != "" {
		t.Fatalf("every other lab passes, yet %q is offered", got)
	}
	// Without watch mode there is no offer, and o does nothing.
	if m.offer() != "" {
		t.Fatal("an offer without a watched lab")
	}
	h.keys("o")
	if h.state() != "home" {
		t.Fatalf("o opened %s", h.state())
	}
}

// longStatus is a screen whose own status is long.
type longStatus struct{ fakeScreen }

func (l *longStatus) Status() string {
	return "question 12/14 · answered 11 · best 93% · first try 71% · retake with r"
}

// TestWatchLineFitsTheStatusLine: with watch mode on, every screen's
// status line keeps the watch's news in view on one line of the terminal's
// width. The watch line takes a shorter form before the screen's own status
// is cut ("01_cas grading…" rather than "watch 01_cas: grading…"), and is
// cut itself only when its shortest form does not fit.
func TestWatchLineFitsTheStatusLine(t *testing.T) {
	for _, w := range []int{80, 60, 30} {
		_, c := watchCheckout(t)
		h := newHarness(t, w, 24, func(o *Options) { o.Course = c; o.Etcd = startOK; o.EtcdDelay = time.Millisecond })
		h.send(etcdStartMsg{})
		h.m.watch.Start(*c.Lab("01_cas")) // grading: its commands are not run here
		t.Cleanup(h.m.watch.Close)
		closed := false
		h.m.push(&longStatus{fakeScreen{lab: "x", closed: &closed}})
		lines := strings.Split(h.screen(), "\n")
		status := lines[len(lines)-2]
		h.checkFits()
		switch w {
		case 80:
			if !strings.Contains(status, "question 12/14 · answered 11 · best 93% · first try") || !strings.Contains(status, " 01_cas grading… ● etcd") {
				t.Fatalf("at 80 columns: %q", status)
			}
		case 60:
			if !strings.Contains(status, "question 12/14 · answered") || !strings.Contains(status, "…  01_cas grading… ● etcd") {
				t.Fatalf("at 60 columns the screen's status is not cut for the watch line: %q", status)
			}
		case 30:
			if strings.TrimSpace(status) != "que…  01_cas grading… ● etcd" {
				t.Fatalf("at 30 columns: %q", status)
			}
		}
		h.keys("esc")
		if w >= 60 {
			h.mustShow("watch 01_cas: grading…")
		}
	}
}

// TestScreenStatusKeepsItsPlaceBesideEtcd: a screen's status that does
// not fit beside etcd's full line (the experiment's "auto-play, 4 s a
// step · t tempo · a step mode") keeps its place, and etcd's address
// gives way to its short form; it was the screen's status that went.
func TestScreenStatusKeepsItsPlaceBesideEtcd(t *testing.T) {
	h := newHarness(t, 80, 24, func(o *Options) { o.Etcd = startOK; o.EtcdDelay = time.Millisecond })
	h.send(etcdStartMsg{})
	closed := false
	h.m.push(&longStatus{fakeScreen{lab: "x", closed: &closed}})
	lines := strings.Split(h.screen(), "\n")
	status := lines[len(lines)-2]
	h.checkFits()
	if !strings.Contains(status, "question 12/14 · answered 11") || !strings.HasSuffix(strings.TrimSpace(status), "● etcd") {
		t.Fatalf("status line at 80 columns: %q", status)
	}
}
