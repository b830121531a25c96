package lab

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/lessons"
)

// TestFlowFaults drives x on lab 07's screen at 80x24 in a real program:
// the learner's file (here the reference with lab 07's no_session_close
// bug, which orphans its session) runs as three replicas in a child
// playground, the verdict names the violation, the timeline opens at it,
// and r runs the reference on the same schedule, which holds.
func TestFlowFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the playground and runs two lab runs")
	}
	root, prog := faultsCheckout(t)
	lab := New(testContext(), Options{Lab: lessons.Lab{ID: "07_election", Title: "A leader loop", File: "election.go"}, Root: root, Program: prog})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tm := teatest.NewTestModel(t, noPrewarm{harness{lab: lab, root: root, ctx: ctx, cancel: cancel}},
		teatest.WithInitialTermSize(80, 24),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	waitFor(t, tm, "Not graded yet")
	tm.Type("x")
	waitFor(t, tm, "Run your code under faults", "pause-owner")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyUp}) // from the first, pause-owner, to the last: calm
	waitFor(t, tm, "no faults: the replicas only run")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitFor(t, tm, "Your code under calm: VIOLATION", "eft-behind at", "timeline")
	tm.Type("r")
	waitFor(t, tm, "The reference solution under calm: HELD", "Your code on the same schedule: violation")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
	waitFor(t, tm, "README")
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(harness)
	if fm.lab.faults.open {
		t.Fatal("the faults view is still open after esc")
	}
	// The timeline opened at the violation the verdict names.
	mine := fm.lab.faults.runs[0]
	if mine == nil || mine.history == nil || mine.view == nil {
		t.Fatal("no history of the learner's run")
	}
	at, ok := experiment.LabViolationAt(mine.history.Verdict.Summary)
	if got := mine.view.At(); !ok || got < at-5*time.Millisecond || got > at+time.Second {
		t.Fatalf("the timeline opened at %v; the violation is at %v (%v): %s", got, at, ok, mine.history.Verdict.Summary)
	}
}

// noPrewarm is the harness without its background compile of the lab's
// tests, which x does not need.
type noPrewarm struct{ harness }

func (h noPrewarm) Init() tea.Cmd { return h.lab.Init() }

// faultsCheckout is a copy of the parts of this checkout a lab run of
// lab 07 builds from, with the bug in the learner's file, and the
// playground built from this checkout.
func faultsCheckout(t *testing.T) (root, prog string) {
	t.Helper()
	wd, _ := os.Getwd()
	src := grade.FindRoot(wd)
	if src == "" {
		t.Fatal("not inside the course's checkout")
	}
	prog = filepath.Join(t.TempDir(), "playground")
	build := exec.Command("go", "build", "-o", prog, "./cmd/playground")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the playground: %v\n%s", err, out)
	}
	// The runner's packages and what they import from the module.
	list := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.Dir}}{{end}}", "./internal/labrun/...")
	list.Dir = src
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	root = t.TempDir()
	dirs := []string{"labs", "solutions/07_election"}
	for _, d := range strings.Fields(string(out)) {
		if rel, err := filepath.Rel(src, d); err == nil && !strings.HasPrefix(rel, "..") && !strings.HasPrefix(rel, "labs") {
			dirs = append(dirs, rel)
		}
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		copyFile(t, filepath.Join(src, f), filepath.Join(root, f))
	}
	for _, d := range dirs {
		copyTree(t, filepath.Join(src, d), filepath.Join(root, d), d == "labs" || strings.HasPrefix(d, "solutions"))
	}
	sol, err := os.ReadFile(filepath.Join(src, "solutions/07_election/election.go"))
	if err != nil {
		t.Fatal(err)
	}
	bug := strings.Replace(string(sol), "\tdefer closeSession(s)\n", "\tdefer s.Orphan()\n", 1)
	if bug == string(sol) {
		t.Fatal("the solution changed: no closeSession to break")
	}
	if err := os.WriteFile(filepath.Join(root, "labs/07_election/election.go"), []byte(bug), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, prog
}

// copyTree copies dir's files (and, deep, its folders too).
func copyTree(t *testing.T, from, to string, deep bool) {
	t.Helper()
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		switch {
		case e.IsDir() && deep:
			copyTree(t, filepath.Join(from, e.Name()), filepath.Join(to, e.Name()), true)
		case !e.IsDir():
			copyFile(t, filepath.Join(from, e.Name()), filepath.Join(to, e.Name()))
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
