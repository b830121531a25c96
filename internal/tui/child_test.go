package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/tui/theme"
	"github.com/ownership-election/playground/lessons"
)

// fakeLab is a lab screen that passes when g is pressed and needs esc for
// itself while "busy".
type fakeLab struct {
	lab    string
	busy   bool
	closed *bool
	w, h   int
	seen   []string
}

func (f *fakeLab) Update(msg tea.Msg) (Screen, tea.Cmd) {
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
		return f, send(LabPassedMsg{Lab: f.lab})
	}
	return f, nil
}
func (f *fakeLab) View() string {
	return "FAKE LAB " + f.lab + strings.Repeat("\nrow", 40) + "\n" + strings.Repeat("x", 300)
}
func (f *fakeLab) SetSize(w, h int)          { f.w, f.h = w, h }
func (f *fakeLab) SetStyles(theme.Styles)    {}
func (f *fakeLab) Capturing() bool           { return f.busy }
func (f *fakeLab) Close()                    { *f.closed = true }
func (f *fakeLab) ShortHelp() []key.Binding  { return nil }
func (f *fakeLab) FullHelp() [][]key.Binding { return nil }

func TestLabScreenPassRecordedAndEscHandling(t *testing.T) {
	var fake *fakeLab
	closed := false
	h := newHarness(t, 80, 24, func(o *Options) {
		o.Lab = func(lab *lessons.Lab, passed bool, st theme.Styles) (Screen, tea.Cmd) {
			fake = &fakeLab{lab: lab.ID, closed: &closed}
			return fake, nil
		}
	})
	// The test course names lab 01_cas but has no lab catalog; the root
	// still opens the screen for it.
	h.keys("l")
	h.mustShow("FAKE LAB 01_cas")
	h.checkFits() // the root keeps even an unruly child inside the screen
	if fake.w != 78 || fake.h != 22 {
		t.Fatalf("child size %dx%d, want 78x22", fake.w, fake.h)
	}
	h.keys("b", "esc")
	if h.m.state != stateLab {
		t.Fatal("esc went back while the lab screen was capturing it")
	}
	if got := strings.Join(fake.seen, ","); got != "b,esc" {
		t.Fatalf("lab saw %q, want b,esc", got)
	}
	h.keys("esc")
	if h.m.state != stateHome || !closed {
		t.Fatalf("second esc: state %v, closed %v; want home and the screen closed", h.m.state, closed)
	}
}

func TestLabPassedIsSaved(t *testing.T) {
	c := loadTestCourse(t)
	c.Labs = append(c.Labs, &lessons.Lab{ID: "01_cas", Title: "CAS", Lesson: "first-steps"})
	closed := false
	h := newHarness(t, 80, 24, func(o *Options) {
		o.Course = c
		o.Lab = func(lab *lessons.Lab, passed bool, st theme.Styles) (Screen, tea.Cmd) {
			return &fakeLab{lab: lab.ID, closed: &closed}, nil
		}
	})
	h.keys("l", "g", "esc")
	h.mustShow("0/3     –   1/1") // pages, quiz, labs of lesson 1
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

// etcdWatcher records the etcd news it gets.
type etcdWatcher struct {
	fakeLab
	got []EtcdReadyMsg
}

func (w *etcdWatcher) Update(msg tea.Msg) (Screen, tea.Cmd) {
	if e, ok := msg.(EtcdReadyMsg); ok {
		w.got = append(w.got, e)
	}
	return w, nil
}

func TestExperimentGetsEtcdWhenReady(t *testing.T) {
	var scr *etcdWatcher
	var atOpen Etcd
	closed := false
	h := newHarness(t, 80, 24, func(o *Options) {
		o.Etcd = startOK
		o.Experiment = func(name string, etcd Etcd, st theme.Styles) (Screen, tea.Cmd) {
			atOpen = etcd
			scr = &etcdWatcher{fakeLab: fakeLab{lab: name, closed: &closed}}
			return scr, nil
		}
	})
	h.keys("x")
	if atOpen != nil {
		t.Fatal("etcd handed over before it started")
	}
	h.send(etcdStartMsg{})
	if len(scr.got) != 1 || scr.got[0].Etcd == nil || scr.got[0].Err != nil {
		t.Fatalf("experiment got %+v, want one ready etcd", scr.got)
	}
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
