// Package screentest drives one screen the way the root model does, for
// the screens' own Update-level tests: keys go to Update, the commands
// they return are run and their messages fed back, and what the screen
// asks of the root (the messages of package screen: open a lesson,
// record a page) is collected for the test to check.
package screentest

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/internal/tui/theme"
	"github.com/ownership-election/playground/lessons"
)

// Learner is the learner the Context names (it seeds option shuffles).
const Learner = "tester"

// Course loads the TUI's test course (internal/tui/testdata/course: two
// lessons, a checkpoint, quizzes of every kind).
func Course(t testing.TB) *lessons.Course {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "testdata", "course")
	c, probs := lessons.Load(lessons.Sources{Course: os.DirFS(dir), CourseRoot: dir,
		ExperimentTitles: map[string]string{"fencing": "A zombie owner's late write"}})
	if len(probs) > 0 {
		t.Fatalf("test course has problems: %v", probs)
	}
	return c
}

// Context is what the root gives a screen: the course, plain styles (no
// colour, so views compare as text), a fresh progress.
func Context(c *lessons.Course) screen.Context {
	return screen.Context{Course: c, Styles: theme.NewStyles(true, true), Progress: progress.New(), Learner: Learner}
}

// Driver holds one screen under test.
type Driver struct {
	t testing.TB
	S screen.Screen
	// Sent is every message the screen sent the root, in order.
	Sent []tea.Msg
}

// New sizes and styles s as the root does, runs its Init, and returns
// its driver.
func New(t testing.TB, s screen.Screen, ctx screen.Context, w, h int) *Driver {
	d := &Driver{t: t, S: s}
	s.SetStyles(ctx.Styles)
	s.SetSize(w, h)
	d.run(s.Init())
	return d
}

// Send gives msg to the screen, with everything it leads to.
func (d *Driver) Send(msg tea.Msg) *Driver {
	d.t.Helper()
	var cmd tea.Cmd
	d.S, cmd = d.S.Update(msg)
	d.run(cmd)
	return d
}

// Press sends each key in turn (names as Key takes them).
func (d *Driver) Press(keys ...string) *Driver {
	d.t.Helper()
	for _, k := range keys {
		d.Send(Key(k))
	}
	return d
}

// View is the screen's body without styling.
func (d *Driver) View() string { return ansi.Strip(d.S.View()) }

// Last is the last message of type T the screen sent the root, and
// whether there was one.
func Last[T any](d *Driver) (T, bool) {
	for i := len(d.Sent) - 1; i >= 0; i-- {
		if m, ok := d.Sent[i].(T); ok {
			return m, true
		}
	}
	var zero T
	return zero, false
}

// screenPkg is the import path of the screen contract: its messages are
// for the root.
var screenPkg = reflect.TypeOf(screen.Back{}).PkgPath()

// run runs cmd to its messages: the root's are kept in Sent, the
// screen's own go back to Update.
func (d *Driver) run(cmd tea.Cmd) {
	for _, msg := range Msgs(cmd) {
		if msg == nil {
			continue
		}
		if reflect.TypeOf(msg).PkgPath() == screenPkg {
			d.Sent = append(d.Sent, msg)
			continue
		}
		d.Send(msg)
	}
}

// Msgs runs cmd and the commands of the batches it returns, and gives
// their messages in order.
func Msgs(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range b {
			out = append(out, Msgs(c)...)
		}
		return out
	}
	return []tea.Msg{msg}
}

// Key is the key press a name stands for: "enter", "esc", "space",
// "up", "down", "left", "right", "pgdown", "end", "tab", "backspace", or
// one character.
func Key(name string) tea.KeyPressMsg {
	switch name {
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
	case "end":
		return tea.KeyPressMsg{Code: tea.KeyEnd}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	}
	r := []rune(name)
	if len(r) != 1 {
		panic("screentest: unknown key name " + name)
	}
	return tea.KeyPressMsg{Code: r[0], Text: name}
}
