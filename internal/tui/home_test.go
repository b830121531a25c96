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
	h.mustShow("3 pages", "quiz of 4", "lab 1.1", "experiment fencing")
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
	h.mustShow("Continue: 01 First steps with a test course, page 3/3 (next unread)", " 2/3      –   0/1")
	h.keys("2") // select another lesson: c still continues lesson 1
	h.keys("c")
	h.mustShow("First steps", "page 3/3")
}

// TestContinueAfterAFinishedLesson: once every page of lesson 1 is read,
// c goes to lesson 2's first page, and lesson 1's last page offers
// lesson 2 (n opens it).
func TestContinueAfterAFinishedLesson(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("enter", "n", "n")
	h.mustShow("page 3/3", "Next lesson: 02 Second thoughts  (→ or n)")
	h.keys("esc")
	h.mustShow("Continue: 02 Second thoughts, page 1/1 (next unread)")
	h.keys("c")
	h.mustShow("Only page", "page 1/1")
	h.keys("esc", "enter", "p", "p") // lesson 1 again, back to its first page
	h.keys("esc", "1", "enter")
	h.keys("n", "n", "n") // past the last page: lesson 2
	h.mustShow("Only page")
	h.keys("esc")
	h.mustShow("Continue where you left off: 02 Second thoughts, page 1/1")
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
// TestHomeLabKeyOpensNextUnpassedLab: l on a lesson with several labs
// lists them by title (labs are not numbered by lesson), enter opens the
// first not passed yet, a number opens that lab, esc closes the list.
func TestHomeLabKeyOpensNextUnpassedLab(t *testing.T) {
	c := &lessons.Course{
		Lessons: []*lessons.Lesson{{ID: "l1", Number: 7, Title: "One", Labs: []string{"a", "b", "c"}}},
		Labs: []*lessons.Lab{
			{ID: "a", Title: "Alpha lab", Lesson: "l1"}, {ID: "b", Title: "Beta lab", Lesson: "l1"}, {ID: "c", Title: "Gamma lab", Lesson: "l1"},
		},
	}
	h := home.New(screen.Context{Course: c, Styles: theme.NewStyles(true, false), Progress: progress.New()}, home.Options{})
	h.SetSize(80, 24)
	open := func(keys ...string) string {
		t.Helper()
		if _, cmd := h.Update(keyMsg("l")); cmd != nil || !h.Capturing() {
			t.Fatalf("l on a lesson with three labs did not list them (capturing %v)", h.Capturing())
		}
		var cmd tea.Cmd
		for _, k := range keys {
			_, cmd = h.Update(keyMsg(k))
		}
		if cmd == nil {
			t.Fatalf("%v after l sent nothing", keys)
		}
		msg, ok := cmd().(screen.OpenLab)
		if !ok {
			t.Fatalf("%v after l sent %T, want screen.OpenLab", keys, cmd())
		}
		if h.Capturing() {
			t.Fatal("the list stayed open after a lab was picked")
		}
		return msg.Lab
	}
	if got := open("enter"); got != "a" {
		t.Fatalf("nothing passed: l enter opens %q, want a", got)
	}
	p := progress.New()
	p.RecordLabPassed("l1", "a", time.Now())
	p.Labs = map[string]progress.LabGrade{"c": {Status: "failing", Step: "step 2 (x)", At: time.Now()}}
	h.Update(screen.ProgressChanged{Progress: p})
	if d := ansi.Strip(h.View()); !strings.Contains(d, "labs 7.1, 7.2, 7.3 (l chooses)") {
		t.Fatalf("detail %q does not say l chooses", d)
	}
	h.Update(keyMsg("l"))
	d := ansi.Strip(h.View())
	for _, want := range []string{"Which lab of lesson 7?", "1 lab 7.1 · Alpha lab · a  ✓ passed", "2 lab 7.2 · Beta lab · b", "3 lab 7.3 · Gamma lab · c  failing",
		"press its number, enter for lab 7.2 · esc closes"} {
		if !strings.Contains(d, want) {
			t.Errorf("lab list lacks %q:\n%s", want, d)
		}
	}
	var help []string
	for _, b := range h.ShortHelp() {
		help = append(help, b.Help().Key)
	}
	if got := strings.Join(help, " "); got != "1-9 enter esc" {
		t.Errorf("help while the lab list is open: %q", got)
	}
	for _, l := range strings.Split(d, "\n") {
		if ansi.StringWidth(l) > 80 {
			t.Errorf("line wider than 80: %q", l)
		}
	}
	h.Update(keyMsg("esc"))
	if h.Capturing() {
		t.Fatal("esc did not close the lab list")
	}
	if got := open("enter"); got != "b" {
		t.Fatalf("a passed: l enter opens %q, want b", got)
	}
	if got := open("3"); got != "c" {
		t.Fatalf("l 3 opens %q, want c", got)
	}
	for _, lab := range []string{"b", "c"} {
		p.RecordLabPassed("l1", lab, time.Now())
	}
	h.Update(screen.ProgressChanged{Progress: p})
	if got := open("enter"); got != "a" {
		t.Fatalf("all passed: l enter opens %q, want the first, a", got)
	}

	// A lesson with one lab opens it at once, and the detail names it by title.
	c.Lessons[0].Labs = []string{"b"}
	h = home.New(screen.Context{Course: c, Styles: theme.NewStyles(true, false), Progress: progress.New()}, home.Options{})
	h.SetSize(80, 24)
	if d := ansi.Strip(h.View()); !strings.Contains(d, "lab 7.1 Beta lab (l)") {
		t.Fatalf("detail does not name the lab by title:\n%s", d)
	}
	_, cmd := h.Update(keyMsg("l"))
	if cmd == nil {
		t.Fatal("l on a lesson with one lab sent nothing")
	}
	if msg, ok := cmd().(screen.OpenLab); !ok || msg.Lab != "b" {
		t.Fatalf("l sent %#v", cmd())
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
