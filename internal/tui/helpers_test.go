package tui

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/tui/screen/experiment"
	"github.com/ownership-election/playground/internal/tui/screen/home"
	"github.com/ownership-election/playground/internal/tui/screen/lab"
	quizscreen "github.com/ownership-election/playground/internal/tui/screen/quiz"
	"github.com/ownership-election/playground/internal/tui/screen/reader"
	"github.com/ownership-election/playground/internal/tui/theme"
	"github.com/ownership-election/playground/lessons"
	"github.com/ownership-election/playground/quiz"
)

const testLearner = "tester"

var testNow = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)

func loadTestCourse(t testing.TB) *lessons.Course {
	t.Helper()
	c, probs := lessons.Load(lessons.Sources{Course: os.DirFS("testdata/course"), CourseRoot: "testdata/course"})
	if len(probs) > 0 {
		t.Fatalf("test course has problems: %v", probs)
	}
	return c
}

// harness drives the root model the way the program would, but
// synchronously: every command a message produces is run and its messages
// fed back, so a test sees the settled screen after each key.
type harness struct {
	t     testing.TB
	m     Model
	quit  bool
	saved string // progress file
}

func newHarness(t testing.TB, w, h int, mod ...func(*Options)) *harness {
	t.Helper()
	opts := Options{
		Course:       loadTestCourse(t),
		Learner:      testLearner,
		Now:          func() time.Time { return testNow },
		ProgressPath: filepath.Join(t.TempDir(), progress.FileName),
	}
	for _, f := range mod {
		f(&opts)
	}
	m := New(opts)
	// Tests are independent of the environment's NO_COLOR and terminal.
	m.setStyles(theme.NewStyles(true, false))
	hs := &harness{t: t, m: m, saved: opts.ProgressPath}
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	return hs
}

func (h *harness) send(msg tea.Msg) {
	h.t.Helper()
	queue := []tea.Msg{msg}
	for steps := 0; len(queue) > 0; steps++ {
		if steps > 500 {
			h.t.Fatal("messages did not settle")
		}
		msg, queue = queue[0], queue[1:]
		switch msg := msg.(type) {
		case tea.QuitMsg:
			h.quit = true
			continue
		case tea.BatchMsg:
			for _, c := range msg {
				if c != nil {
					queue = append(queue, c())
				}
			}
			continue
		case nil:
			continue
		}
		if reflect.TypeOf(msg).Name() == "sequenceMsg" {
			for _, c := range reflect.ValueOf(msg).Convert(reflect.TypeFor[[]tea.Cmd]()).Interface().([]tea.Cmd) {
				if c != nil {
					queue = append(queue, c())
				}
			}
			continue
		}
		next, cmd := h.m.Update(msg)
		h.m = next.(Model)
		if cmd != nil {
			queue = append(queue, cmd())
		}
	}
}

// keys presses each key in turn. Names: "enter", "esc", "space",
// "left", "right", "up", "down", "pgdown", "backspace", "ctrl+c",
// "shift+down", or a single character.
func (h *harness) keys(names ...string) {
	h.t.Helper()
	for _, n := range names {
		h.send(keyMsg(n))
	}
}

func keyMsg(n string) tea.KeyPressMsg {
	switch n {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEsc}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "shift+down":
		return tea.KeyPressMsg{Code: tea.KeyDown, Mod: tea.ModShift}
	}
	r := []rune(n)
	if len(r) != 1 {
		panic("unknown key name " + n)
	}
	return tea.KeyPressMsg{Code: r[0], Text: n}
}

// screen is the stripped view.
func (h *harness) screen() string {
	return ansi.Strip(h.m.View().Content)
}

func (h *harness) mustShow(subs ...string) {
	h.t.Helper()
	s := h.screen()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			h.t.Fatalf("screen does not show %q:\n%s", sub, s)
		}
	}
}

func (h *harness) mustNotShow(subs ...string) {
	h.t.Helper()
	s := h.screen()
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			h.t.Fatalf("screen shows %q but should not:\n%s", sub, s)
		}
	}
}

// checkFits fails when the view is taller or wider than the terminal.
func (h *harness) checkFits() {
	h.t.Helper()
	lines := strings.Split(h.screen(), "\n")
	if len(lines) > h.m.height {
		h.t.Fatalf("view has %d lines, terminal %d:\n%s", len(lines), h.m.height, h.screen())
	}
	for i, l := range lines {
		if w := ansi.StringWidth(l); w > h.m.width {
			h.t.Fatalf("line %d is %d wide, terminal %d: %q", i+1, w, h.m.width, l)
		}
	}
}

func (h *harness) savedProgress() *progress.Progress {
	h.t.Helper()
	p, n := progress.Load(h.saved, testNow)
	if n != nil {
		h.t.Fatalf("saved progress unreadable: %v", n)
	}
	return p
}

// displayPos returns the 1-based display number of the option (or item)
// with index idx for the test learner.
func displayPos(q *quiz.Question, idx int) string {
	for pos, i := range quiz.Shuffle(q, testLearner) {
		if i == idx {
			return string(rune('1' + pos))
		}
	}
	panic("no such option")
}

// fakeEtcd is a started etcd for the status line.
type fakeEtcd struct{ closed bool }

func (f *fakeEtcd) Endpoints() []string { return []string{"http://127.0.0.1:23790"} }
func (f *fakeEtcd) Close() error        { f.closed = true; return nil }

func (f *fakeEtcd) Client() (*clientv3.Client, error) { return nil, errors.New("fake etcd") }

func startOK(context.Context) (embedetcd.Etcd, error) { return &fakeEtcd{}, nil }

func startFail(context.Context) (embedetcd.Etcd, error) {
	return nil, errors.New("listen tcp 127.0.0.1:0: address in use")
}

func ansiStrip(s string) string { return ansi.Strip(s) }

// state names the screen on top.
func (h *harness) state() string { return stateOf(h.m) }

func stateOf(m Model) string {
	switch m.top().(type) {
	case *home.Model:
		return "home"
	case *reader.Model:
		return "reader"
	case *quizscreen.Model:
		return "quiz"
	case *lab.Model:
		return "lab"
	case *experiment.Model:
		return "experiment"
	}
	return "?"
}

func (h *harness) readerScreen() *reader.Model {
	h.t.Helper()
	r, ok := h.m.top().(*reader.Model)
	if !ok {
		h.t.Fatalf("the reader is not on top (%s)", h.state())
	}
	return r
}

func (h *harness) quizScreen() *quizscreen.Model {
	h.t.Helper()
	q, ok := h.m.top().(*quizscreen.Model)
	if !ok {
		h.t.Fatalf("the quiz is not on top (%s)", h.state())
	}
	return q
}
