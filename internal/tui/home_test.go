package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/internal/tui/screen/home"
	"github.com/ownership-election/playground/internal/tui/theme"
	"github.com/ownership-election/playground/lessons"
)

func TestHomeListsLessonsWithProgress(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.mustShow("Ownership election playground", "01 First steps with a test course", "02 Second thoughts",
		"pages  quiz  labs", " 0/3      –   0/1", "New here?")
	// The detail of the selected lesson names its parts.
	h.mustShow("3 pages", "quiz of 4", "lab 01_cas", "experiment fencing")
	h.checkFits()
}

func TestHomeCursorMovesAndOpensLesson(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("down")
	h.mustShow("The second test lesson")
	h.keys("up", "enter")
	if h.state() != "reader" {
		t.Fatalf("state = %v after enter, want the reader", h.state())
	}
	h.mustShow("01 First steps with a test course", "Opening page", "page 1/3")
}

func TestHomeNumberKeySelectsLesson(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("2", "enter")
	h.mustShow("02 Second thoughts", "Only page")
}

func TestHomeContinueWhereLeftOff(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("enter", "n", "esc")
	if h.state() != "home" {
		t.Fatalf("esc from the reader should go home, state %s", h.state())
	}
	h.mustShow("Continue where you left off: 01 First steps with a test course, page 2/3", " 2/3      –   0/1")
	h.keys("2") // select another lesson: c still continues lesson 1
	h.keys("c")
	h.mustShow("Middle page", "page 2/3")
}

func TestHomeQuitsWithQ(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("q")
	if !h.quit {
		t.Fatal("q on the home screen did not quit")
	}
}

func TestQIsNotQuitOutsideHome(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("enter", "q")
	if h.quit {
		t.Fatal("q in the reader quit the program")
	}
}

func TestCtrlCQuitsFromAnywhere(t *testing.T) {
	for _, path := range [][]string{{}, {"enter"}, {"t"}, {"enter", "c"}} {
		h := newHarness(t, 80, 24)
		h.keys(path...)
		h.keys("ctrl+c")
		if !h.quit {
			t.Fatalf("ctrl+c after %v did not quit", path)
		}
	}
}

func TestHomeShowsProgressNotice(t *testing.T) {
	h := newHarness(t, 80, 24, func(o *Options) {
		o.ProgressNotice = "saved progress could not be read; it was moved to /x/progress.json.corrupt-1"
	})
	h.mustShow("saved progress could not be read", "progress.json.corrupt-1")
	h.checkFits()
}

func TestHelpTogglesFullHelp(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("?")
	h.mustShow("Keys on this screen", "read lesson", "continue", "experiment", "quit now")
	h.checkFits()
	h.keys("esc")
	h.mustNotShow("Keys on this screen")
	if h.state() != "home" {
		t.Fatal("closing help left the home screen")
	}
	// The reader's help lists the reader's keys.
	h.keys("enter", "?")
	h.mustShow("next page", "previous page", "checkpoint", "lesson quiz")
}

func TestEtcdStatusStartingThenReady(t *testing.T) {
	h := newHarness(t, 80, 24, func(o *Options) { o.Etcd = startOK })
	h.mustShow("etcd: starting")
	cmd := h.m.Init()
	if cmd == nil {
		t.Fatal("Init returned no command; etcd would never start")
	}
	h.send(etcdStartMsg{})
	h.mustShow("etcd: ready http://127.0.0.1:23790")
	h.keys("enter")
	h.mustShow("etcd: ready") // the status line is on every screen
}

func TestEtcdStatusFailedShowsReasonAndLog(t *testing.T) {
	h := newHarness(t, 120, 40, func(o *Options) {
		o.Etcd = startFail
		o.EtcdLogPath = "/state/etcd.log"
	})
	h.send(etcdStartMsg{})
	h.mustShow("etcd failed: listen tcp 127.0.0.1:0: address in use", "/state/etcd.log")
	h.checkFits()
}

func TestEtcdStatusExternal(t *testing.T) {
	h := newHarness(t, 100, 24, func(o *Options) { o.Etcd = startOK; o.EtcdExternal = true })
	h.mustShow("etcd: connecting")
	h.send(etcdStartMsg{})
	h.mustShow("etcd: external cluster http://127.0.0.1:23790")
}

func TestFirstFrameDoesNotWaitForEtcd(t *testing.T) {
	// The model draws its home screen before anything about etcd is known:
	// the start is a delayed command, not work done in New or Init.
	block := make(chan struct{})
	defer close(block)
	m := New(Options{Course: loadTestCourse(t), Etcd: func(ctx context.Context) (embedetcd.Etcd, error) {
		<-block
		return nil, ctx.Err()
	}})
	_ = m.Init()
	if !strings.Contains(ansiStrip(m.View().Content), "01 First steps") {
		t.Fatal("first frame lacks the course map")
	}
}

func TestResizeReachesEveryScreen(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("enter")
	h.send(tea.WindowSizeMsg{Width: 200, Height: 60})
	h.checkFits()
	h.mustShow("Pages", "1. Opening page") // the sidebar appears when wide
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	h.checkFits()
	h.mustNotShow("1. Opening page")
}

func TestNoColorEnvironment(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	m := New(Options{Course: loadTestCourse(t)})
	next, _ := m.Update(tea.BackgroundColorMsg{})
	out := next.(Model).View().Content
	if strings.Contains(out, "\x1b[38") || strings.Contains(out, "\x1b[48") {
		t.Fatalf("NO_COLOR set but the view has colour codes: %q", out[:min(len(out), 300)])
	}
}

// With several labs, l opens the first one not passed yet, so every lab of
// a lesson can be reached from the course map, and the detail says which.
func TestHomeLabKeyOpensNextUnpassedLab(t *testing.T) {
	c := &lessons.Course{Lessons: []*lessons.Lesson{{ID: "l1", Number: 1, Title: "One", Labs: []string{"a", "b", "c"}}}}
	h := home.New(c, screen.Context{Styles: theme.NewStyles(true, false), Progress: progress.New()}, "")
	h.SetSize(80, 24)
	open := func() string {
		t.Helper()
		_, cmd := h.Update(keyMsg("l"))
		if cmd == nil {
			t.Fatal("l sent nothing")
		}
		msg, ok := cmd().(screen.OpenLab)
		if !ok {
			t.Fatalf("l sent %T, want screen.OpenLab", cmd())
		}
		return msg.Lab
	}
	if got := open(); got != "a" {
		t.Fatalf("nothing passed: l opens %q, want a", got)
	}
	p := progress.New()
	p.RecordLabPassed("l1", "a", time.Now())
	h.Update(screen.ProgressChanged{Progress: p})
	if got := open(); got != "b" {
		t.Fatalf("a passed: l opens %q, want b", got)
	}
	if d := ansi.Strip(h.View()); !strings.Contains(d, "labs a, b, c (l: b)") {
		t.Fatalf("detail %q does not say l opens b", d)
	}
	for _, lab := range []string{"b", "c"} {
		p.RecordLabPassed("l1", lab, time.Now())
	}
	h.Update(screen.ProgressChanged{Progress: p})
	if got := open(); got != "a" {
		t.Fatalf("all passed: l opens %q, want the first, a", got)
	}
}

func TestSmallTerminalsDoNotOverflow(t *testing.T) {
	for _, size := range [][2]int{{50, 12}, {40, 8}} {
		for _, path := range [][]string{nil, {"enter"}, {"enter", "c"}, {"t"}, {"t", "1", "enter"}, {"?"}, {"x"}} {
			h := newHarness(t, size[0], size[1])
			h.keys(path...)
			h.checkFits()
		}
	}
}
