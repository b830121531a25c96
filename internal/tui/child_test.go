package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

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
	h.mustShow("Lab 01_cas", "labs not found on this machine")
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

func TestOlderSaveNeverOverwritesNewer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "progress.json")
	m := New(Options{Course: loadTestCourse(t), ProgressPath: path})
	m.prog.MarkPageRead("first-steps", 0, testNow)
	older := m.save()
	m.prog.MarkPageRead("first-steps", 1, testNow)
	newer := m.save()
	// The newer snapshot lands first; the older one arrives late.
	if msg := newer().(progressSavedMsg); msg.err != nil {
		t.Fatal(msg.err)
	}
	if msg := older().(progressSavedMsg); msg.err != nil {
		t.Fatal(msg.err)
	}
	h := &harness{t: t, saved: path}
	if got := h.savedProgress().Lessons["first-steps"].PagesRead; len(got) != 2 {
		t.Fatalf("pages read on disk %v: the older save overwrote the newer", got)
	}
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
