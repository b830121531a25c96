package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/internal/tui/theme"
	"github.com/ownership-election/playground/lessons"
)

// fakeScreen is a hosted screen that reports a lab pass when g is
// pressed and needs esc for itself while "busy".
type fakeScreen struct {
	lab    string
	busy   bool
	closed *bool
	w, h   int
	seen   []string
	etcd   []screen.EtcdReady
}

func (f *fakeScreen) Init() tea.Cmd { return nil }
func (f *fakeScreen) Update(msg tea.Msg) (screen.Screen, tea.Cmd) {
	if e, ok := msg.(screen.EtcdReady); ok {
		f.etcd = append(f.etcd, e)
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return f, nil
	}
	f.seen = append(f.seen, k.String())
	switch k.String() {
	case "b":
		f.busy = true
	case "esc":
		f.busy = false
	case "g":
		return f, screen.Send(screen.LabPassed{Lab: f.lab})
	}
	return f, nil
}
func (f *fakeScreen) View() string {
	return "FAKE LAB " + f.lab + strings.Repeat("\nrow", 40) + "\n" + strings.Repeat("x", 300)
}
func (f *fakeScreen) SetSize(w, h int)          { f.w, f.h = w, h }
func (f *fakeScreen) SetStyles(theme.Styles)    {}
func (f *fakeScreen) Title() string             { return "" }
func (f *fakeScreen) Status() string            { return "" }
func (f *fakeScreen) Capturing() bool           { return f.busy }
func (f *fakeScreen) Typing() bool              { return false }
func (f *fakeScreen) Close()                    { *f.closed = true }
func (f *fakeScreen) ShortHelp() []key.Binding  { return nil }
func (f *fakeScreen) FullHelp() [][]key.Binding { return nil }

func TestHostedScreenEscHandling(t *testing.T) {
	closed := false
	fake := &fakeScreen{lab: "01_cas", closed: &closed}
	h := newHarness(t, 80, 24)
	h.m.push(fake)
	h.mustShow("FAKE LAB 01_cas")
	h.checkFits() // the root keeps even an unruly screen inside the terminal
	if fake.w != 78 || fake.h != 22 {
		t.Fatalf("screen size %dx%d, want 78x22 (it draws its own title)", fake.w, fake.h)
	}
	h.keys("b", "esc")
	if h.m.top() != screen.Screen(fake) {
		t.Fatal("esc went back while the screen was capturing it")
	}
	if got := strings.Join(fake.seen, ","); got != "b,esc" {
		t.Fatalf("screen saw %q, want b,esc", got)
	}
	h.keys("esc")
	if !h.m.atHome() || !closed {
		t.Fatalf("second esc: at home %v, closed %v; want home and the screen closed", h.m.atHome(), closed)
	}
}

func TestLabOpensFromHome(t *testing.T) {
	// The test course names lab 01_cas but has no lab catalogue and no
	// checkout: the lab screen opens and says how to get the labs.
	h := newHarness(t, 80, 24)
	h.keys("l")
	h.mustShow("Lab 1.1 · ", "labs not found on this machine")
	h.checkFits()
	h.keys("esc")
	if !h.m.atHome() {
		t.Fatal("esc did not leave the lab screen")
	}
}

func TestLabPassedIsSaved(t *testing.T) {
	c := loadTestCourse(t)
	c.Labs = append(c.Labs, &lessons.Lab{ID: "01_cas", Title: "CAS", Lesson: "first-steps"})
	closed := false
	h := newHarness(t, 80, 24, func(o *Options) { o.Course = c })
	h.m.push(&fakeScreen{lab: "01_cas", closed: &closed})
	h.keys("g", "esc")
	h.mustShow(" 0/3      –   1/1") // pages, quiz, labs of lesson 1
	if !h.savedProgress().LabPassed("first-steps", "01_cas") {
		t.Fatal("lab pass not saved")
	}
}

func TestSaveFailureIsShown(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, 80, 24, func(o *Options) { o.ProgressPath = filepath.Join(blocker, "progress.json") })
	h.keys("enter")
	h.mustShow("could not save progress")
	h.checkFits()
}

func TestScreensGetEtcdWhenReady(t *testing.T) {
	closed := false
	fake := &fakeScreen{lab: "x", closed: &closed}
	h := newHarness(t, 80, 24, func(o *Options) { o.Etcd = startOK })
	h.m.push(fake)
	h.send(etcdStartMsg{})
	if len(fake.etcd) != 1 || fake.etcd[0].Etcd == nil || fake.etcd[0].Err != nil {
		t.Fatalf("screen got %+v, want one ready etcd", fake.etcd)
	}
}

func TestExperimentOpensFromHome(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("x") // lesson 1 lists the fencing experiment
	h.mustShow("Experiment: fencing")
	h.checkFits()
}

func TestBackgroundWorkStartsAfterStart(t *testing.T) {
	ran := false
	h := newHarness(t, 80, 24, func(o *Options) {
		o.Background = func() tea.Msg { ran = true; return nil }
	})
	if ran {
		t.Fatal("background work ran before it was due")
	}
	h.send(backgroundMsg{})
	if !ran {
		t.Fatal("background work never ran")
	}
}

// Two changes whose background commands run in the opposite order reach
// the file in the order the program made them: the place to continue from
// is the later page, and the command that runs second has nothing left to
// write.
func TestChangesReachTheFileInOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "progress.json")
	m := New(Options{Course: loadTestCourse(t), ProgressPath: path})
	first := m.record(func(p *progress.Progress) { p.MarkPageRead("first-steps", 0, testNow) })
	second := m.record(func(p *progress.Progress) { p.MarkPageRead("first-steps", 1, testNow) })
	ran, late := second().(progressSavedMsg), first().(progressSavedMsg)
	if ran.err != nil || late.err != nil {
		t.Fatal(ran.err, late.err)
	}
	if late.disk != nil || m.adopt(late) {
		t.Fatal("the command that ran second wrote or adopted something")
	}
	h := &harness{t: t, saved: path}
	disk := h.savedProgress()
	if got := disk.Lessons["first-steps"].PagesRead; len(got) != 2 {
		t.Fatalf("pages read on disk %v: one change was lost", got)
	}
	if disk.Last.Page != 1 {
		t.Fatalf("the place to continue from on disk is page %d, want 1 (the later change)", disk.Last.Page+1)
	}
	m.adopt(ran)
	if got := m.prog.Lessons["first-steps"]; len(got.PagesRead) != 2 || m.prog.Last.Page != 1 {
		t.Fatalf("in memory after the writes: pages %v, continue at %d", got.PagesRead, m.prog.Last.Page)
	}
}

// What another program records while the TUI runs (playground grade in a
// second terminal) shows up after the TUI's next change, and what another
// program resets (playground progress reset) does not come back when the
// TUI next writes. Before changes were written with progress.Update, the
// TUI saved a merge of its whole copy: the reset lesson came back, and the
// other program's pass stayed invisible until a restart.
func TestOtherProgramsRecordsAndResetsAreKept(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("enter") // read page 1 of lesson 1
	h.keys("esc")
	if got := h.savedProgress().Lessons["first-steps"]; got == nil || len(got.PagesRead) == 0 {
		t.Fatal("page 1 was not saved")
	}
	// Another program forgets lesson 1 and records a pass of its lab.
	if _, err := progress.Update(h.saved, func(p *progress.Progress) {
		p.ResetLesson("first-steps", testNow)
		p.RecordLabGrade("first-steps", "01_cas", progress.LabGrade{Status: progress.LabStatusPassed, At: testNow})
	}); err != nil {
		t.Fatal(err)
	}
	// The TUI records something else: a page of lesson 2.
	h.send(screen.PageShown{Lesson: "second-thoughts", Page: 0})
	disk := h.savedProgress()
	if got := disk.Lessons["first-steps"]; got != nil && len(got.PagesRead) > 0 {
		t.Fatalf("the page reset by another program came back: %v", got.PagesRead)
	}
	if !disk.LabPassed("first-steps", "01_cas") {
		t.Fatal("the TUI's write lost the pass another program recorded")
	}
	h.mustShow(" 0/3      –   1/1") // the course map shows the other program's pass
}

// With Options.Load, the first frame comes from the outline; a screen
// asked for before the whole course is loaded opens once it is, with the
// loaded lesson (its quiz and checkpoints included).
func TestScreensOpenOnceTheCourseIsLoaded(t *testing.T) {
	full := loadTestCourse(t)
	outline := lessons.Outline(lessons.Sources{Course: os.DirFS("testdata/course"), CourseRoot: "testdata/course"})
	m := New(Options{Course: outline, Load: func() (*lessons.Course, []lessons.Problem) { return full, nil }})
	m.setStyles(theme.NewStyles(true, false))
	h := &harness{t: t, m: m}
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	h.mustShow("First steps with a test course")
	h.keys("t") // the quiz, before the course is loaded
	if h.state() != "home" {
		t.Fatalf("a quiz opened from the outline (%s)", h.state())
	}
	h.send(courseLoadedMsg{course: full})
	if h.state() != "quiz" {
		t.Fatalf("after loading, state %s, want the quiz asked for", h.state())
	}
	h.mustShow("Which number is two?")
}
