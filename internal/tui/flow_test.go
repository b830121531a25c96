package tui

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	quizscreen "github.com/ownership-election/playground/internal/tui/screen/quiz"
)

// startProgram runs the real Bubble Tea program around the root model,
// with a fixed size and the ASCII colour profile.
func startProgram(t *testing.T) *teatest.TestModel {
	t.Helper()
	m := New(Options{Course: loadTestCourse(t), Learner: testLearner, Now: func() time.Time { return testNow }})
	return teatest.NewTestModel(t, m,
		teatest.WithInitialTermSize(80, 24),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
}

// waitFor waits until the screen shows what. The renderer only sends the
// cells that changed, so the test asks for a full repaint and reads it
// back, turning cursor-forward moves over blank cells into spaces; it
// asks again every 200 ms, since what it waits for may come after the
// repaint (a page's read mark is a message of its own, which a busy
// machine delivers after the next key), and then only its changed cells
// would be sent. 30 s: the wait ends as soon as the screen shows it.
func waitFor(t *testing.T, tm *teatest.TestModel, what string) {
	t.Helper()
	tm.Send(tea.ClearScreen())
	asked := time.Now()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		if strings.Contains(plainOutput(b), what) {
			return true
		}
		if time.Since(asked) > 200*time.Millisecond {
			tm.Send(tea.ClearScreen())
			asked = time.Now()
		}
		return false
	}, teatest.WithDuration(30*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
}

var cursorForward = regexp.MustCompile(`\x1b\[([0-9]*)C`)

func plainOutput(b []byte) string {
	s := cursorForward.ReplaceAllStringFunc(string(b), func(seq string) string {
		n, err := strconv.Atoi(cursorForward.FindStringSubmatch(seq)[1])
		if err != nil {
			n = 1
		}
		return strings.Repeat(" ", n)
	})
	return ansi.Strip(s)
}

func TestFlowOpenLessonPageBack(t *testing.T) {
	tm := startProgram(t)
	waitFor(t, tm, "New here?")
	tm.Send(keyMsg("enter"))
	waitFor(t, tm, "page 1/3")
	tm.Send(keyMsg("n"))
	waitFor(t, tm, "page 2/3")
	tm.Send(keyMsg("esc"))
	waitFor(t, tm, "Continue: 01 First steps with a test course, page 3/3 (next unread)")
	tm.Send(keyMsg("q"))
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(Model)
	if stateOf(final) != "home" {
		t.Fatalf("final state %s, want home", stateOf(final))
	}
	if l := final.prog.Lessons["first-steps"]; l == nil || len(l.PagesRead) != 2 {
		t.Fatalf("pages read = %+v, want 2", l)
	}
}

func TestFlowAnswerQuizQuestion(t *testing.T) {
	tm := startProgram(t)
	waitFor(t, tm, "New here?")
	tm.Send(keyMsg("t"))
	waitFor(t, tm, "Which number is two?")
	q := loadTestCourse(t).Lesson("first-steps").Quiz.Questions[0]
	tm.Send(keyMsg(displayPos(q, 0)))
	tm.Send(keyMsg("enter"))
	waitFor(t, tm, "Five is much larger.")
	tm.Send(keyMsg("ctrl+c"))
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(Model)
	q0, ok := final.top().(*quizscreen.Model)
	if !ok || !q0.Current().Answered() || !q0.Current().Result().Correct {
		t.Fatal("the quiz question was not graded correct")
	}
}
