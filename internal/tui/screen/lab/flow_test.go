package lab

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/internal/tui/screen"
)

// harness stands in for the root model: it sizes the screen, starts the
// background compile, and records the messages the root would handle.
type harness struct {
	lab       *Model
	root      string
	cancel    context.CancelFunc
	ctx       context.Context
	prewarmed []string
	passed    []string
}

func (h harness) Init() tea.Cmd {
	return tea.Batch(h.lab.Init(), Prewarm(h.ctx, grade.NewCourse(os.DirFS(h.root)), h.root, []string{h.lab.Lab().ID}))
}

func (h harness) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		h.lab.SetSize(msg.Width, msg.Height-1)
	case PrewarmedMsg:
		if msg.Err == nil {
			h.prewarmed = append(h.prewarmed, msg.Lab)
		}
		return h, nil
	case screen.LabPassed:
		h.passed = append(h.passed, msg.Lab)
		return h, nil
	case tea.KeyPressMsg:
		if msg.String() == "ctrl+c" {
			h.lab.Close()
			return h, tea.Quit
		}
	}
	var cmd tea.Cmd
	_, cmd = h.lab.Update(msg)
	return h, cmd
}

func (h harness) View() tea.View {
	// The renderer only redraws what changed, so each fact is text that
	// appears whole: "prewarmed X", then " passed X" after it.
	foot := ""
	if len(h.prewarmed) > 0 {
		foot = "prewarmed " + strings.Join(h.prewarmed, ",")
	}
	if len(h.passed) > 0 {
		foot += " passed " + strings.Join(h.passed, ",")
	}
	v := tea.NewView(h.lab.View() + "\n" + foot)
	v.AltScreen = true // as the real program: the whole screen is ours
	return v
}

// waitFor waits up to 90 s for the screen to have shown all of what.
func waitFor(t *testing.T, tm *teatest.TestModel, what ...string) {
	t.Helper()
	waitShown(t, tm, 90*time.Second, what...)
}

// waitShown waits up to within for the program's output to hold every
// one of what, and fails the test if it does not.
func waitShown(t *testing.T, tm *teatest.TestModel, within time.Duration, what ...string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		for _, w := range what {
			if !bytes.Contains(b, []byte(w)) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(within), teatest.WithCheckInterval(50*time.Millisecond))
}

// TestFlowGradeFixtureLab drives the screen in a real program: the fixture
// lab is compiled in the background, graded with go test, its failing step
// and first hint appear, and watch mode re-grades after the learner saves a
// fix.
func TestFlowGradeFixtureLab(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test on the fixture module")
	}
	root := copyFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	editor := filepath.Join(t.TempDir(), "fake-editor")
	script := "#!/bin/sh\nprintf 'package demo\\n\\nfunc Add(a, b int) int { return a + b }\\n\\nfunc Double(n int) int { return n + n }\\n' > \"$1\"\n"
	if err := os.WriteFile(editor, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	lab := New(testContext(), Options{Lab: demoLab(), Root: root, Debounce: 50 * time.Millisecond, Editor: editor, Course: grade.NewCourse(os.DirFS(root))})
	tm := teatest.NewTestModel(t, harness{lab: lab, root: root, ctx: ctx, cancel: cancel},
		teatest.WithInitialTermSize(80, 24),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))

	waitFor(t, tm, "prewarmed 00_demo")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitFor(t, tm, "Step 2 failed", "Double(21) = 21, want 42", "Press h for a hint")
	tm.Type("h")
	waitFor(t, tm, "Twice a number is the number added to itself.")

	// Watch mode: a save that breaks the build is graded without a key.
	tm.Type("w")
	waitFor(t, tm, "watching")
	broken := "package demo\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Double(n int) int { return nn }\n"
	if err := os.WriteFile(filepath.Join(root, "labs/00_demo/demo.go"), []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tm, "Does not compile", "demo.go:5:")

	// The editor (a script standing in for vi) saves a fix; watch mode
	// grades it.
	tm.Type("e")
	waitFor(t, tm, "Every step passes", "passed 00_demo")

	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(harness)
	if len(fm.passed) == 0 || fm.passed[0] != "00_demo" {
		t.Fatalf("root did not get screen.LabPassed: %v", fm.passed)
	}
	if fm.lab.watching {
		t.Fatal("watch mode still on after Close")
	}
}
