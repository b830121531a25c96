package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/internal/labrun"
	"github.com/ownership-election/playground/lessons"
)

// faultsFlow is one lab's flow of x on its screen: the learner's file is
// the reference with one of the lab's learner bugs, run under schedule
// (down presses from the first in the list), whose verdict must name the
// violation; then r runs the reference on the same schedule.
type faultsFlow struct {
	lab      lessons.Lab
	bug      string // solutions/<lab>/testdata/bugs/<bug>.patch
	schedule string
	down     int    // key presses from pause-owner, the first, to schedule
	names    string // how the verdict's violation sentence begins
}

var faultsFlows = []faultsFlow{
	// A lock key without the lease outlives its crashed holder.
	{lessons.Lab{ID: "05_etcd_lock", Title: "A lock on etcd", File: "lock.go"}, "no_lease", "crash-owner", 2, "Not-freed at"},
	// A write in the Else branch lands for the paused holder, woken
	// after its lock went to another.
	{lessons.Lab{ID: "06_fenced_write", Title: "A fenced write", File: "fenced.go"}, "else_writes_anyway", "pause-owner", 0, "Stale-write at"},
	// A session resigned but never closed: its lease outlives Run.
	{lessons.Lab{ID: "07_election", Title: "A leader loop", File: "election.go"}, "no_session_close", "calm", -2, "Left-behind at"},
	// A queue key without the lease outlives its crashed holder, and
	// nobody behind it gets a turn again. (Under calm the bug shows only
	// when a waiter is stopped while still in line, which the timing of
	// the stop decides: a loaded machine hid it in 2 of 7 runs.)
	{lessons.Lab{ID: "08_herd", Title: "A queue without a herd", File: "queue.go"}, "enqueue_no_lease", "crash-owner", 2, "Missed-turn at"},
	// A revoke with Run's cancelled context never happens.
	{lessons.Lab{ID: "09_shards", Title: "Shard ownership", File: "shards.go"}, "revoke_with_run_ctx", "calm", -2, "Left-behind at"},
}

// TestFlowFaults drives x on each runner lab's screen at 80x24 in a real
// program: the learner's file (the reference with one of the lab's
// learner bugs) runs as three replicas in a child playground, the
// verdict names the violation, the timeline opens at it, and r runs the
// reference on the same schedule, which holds. The labs go as go test's
// -parallel allows (two at once on two cores), each run with an etcd of
// its own in its child.
func TestFlowFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the playground and runs two lab runs per lab")
	}
	for _, c := range faultsFlows {
		t.Run(c.lab.ID, func(t *testing.T) {
			t.Parallel()
			flowFaults(t, c)
		})
	}
}

func flowFaults(t *testing.T, c faultsFlow) {
	root, prog := faultsCheckout(t, c.lab, c.bug)
	lab := New(testContext(), Options{Lab: c.lab, Root: root, Program: prog})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tm := teatest.NewTestModel(t, noPrewarm{harness{lab: lab, root: root, ctx: ctx, cancel: cancel}},
		teatest.WithInitialTermSize(80, 24),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	waitFor(t, tm, "Not graded yet")
	tm.Type("x")
	waitFor(t, tm, "Run your code under faults", says("pause-owner"))
	if c.down != 0 {
		pickSchedule(tm, c.down)
		waitFor(t, tm, says(c.schedule))
	}
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitRun(t, tm, "Your code under "+c.schedule+": VIOLATION", c.names, "timeline")
	tm.Type("r")
	waitRun(t, tm, "The reference solution under "+c.schedule+": HELD", "Your code on the same schedule: violation")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
	waitFor(t, tm, "README")
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(harness)
	if fm.lab.faults.IsOpen() {
		t.Fatal("the faults view is still open after esc")
	}
	// The timeline opened at the violation the verdict names.
	mine, ok := fm.lab.faults.Run(false)
	if !ok || mine.History == nil || mine.Timeline == nil {
		t.Fatal("no history of the learner's run")
	}
	f, ok := mine.History.Verdict.TimedViolation()
	if got := mine.Timeline.At(); !ok || got < f.At-5*time.Millisecond || got > f.At+time.Second {
		t.Fatalf("the timeline opened at %v; the violation is at %v (%v): %s", got, f.At, ok, mine.History.Verdict.Sentence())
	}
	if ref, ok := fm.lab.faults.Run(true); !ok || ref.History == nil || !ref.History.Verdict.Showed || len(ref.History.Faults()) == 0 && c.schedule != "calm" {
		t.Fatalf("the reference's run did not hold under %s with its faults: %+v", c.schedule, ref)
	}
}

// runWait bounds the wait for a run's verdict: the replica program's
// build may take labrun.BuildTimeout (3 min, cold), then the run lasts 10
// to 30 s, longer on a loaded machine.
const runWait = 4 * time.Minute

// waitRun waits for a run's verdict on screen.
func waitRun(t *testing.T, tm *teatest.TestModel, what ...string) {
	t.Helper()
	waitShown(t, tm, runWait, what...)
}

// pickSchedule moves the list's cursor down n times (up for n < 0).
func pickSchedule(tm *teatest.TestModel, n int) {
	k := tea.KeyDown
	if n < 0 {
		k, n = tea.KeyUp, -n
	}
	for range n {
		tm.Send(tea.KeyPressMsg{Code: k})
	}
}

// says is the start of what the schedule list says the chosen schedule
// does, short enough to stay on the first line at 80 columns.
func says(schedule string) string {
	s := labrun.ScheduleSays(schedule)
	if len(s) > 24 {
		s = s[:24]
	}
	return s
}

// noPrewarm is the harness without its background compile of the lab's
// tests, which x does not need.
type noPrewarm struct{ harness }

func (h noPrewarm) Init() tea.Cmd { return h.lab.Init() }

// playground is the playground built from this checkout, once for every
// flow (removed by TestMain).
var playground = sync.OnceValues(func() (string, error) {
	wd, _ := os.Getwd()
	src := grade.FindRoot(wd)
	if src == "" {
		return "", errors.New("not inside the course's checkout")
	}
	dir, err := os.MkdirTemp("", "lab-flow-playground-")
	if err != nil {
		return "", err
	}
	builtDirs = append(builtDirs, dir)
	prog := filepath.Join(dir, "playground")
	build := exec.Command("go", "build", "-o", prog, "./cmd/playground")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the playground: %w\n%s", err, out)
	}
	return prog, nil
})

// builtDirs are the folders playground made, for TestMain to remove.
var builtDirs []string

// faultsCheckout is a copy of the parts of this checkout a lab run of
// lab builds from, with the reference carrying bug as the learner's
// file, and the playground built from this checkout.
func faultsCheckout(t *testing.T, lab lessons.Lab, bug string) (root, prog string) {
	t.Helper()
	wd, _ := os.Getwd()
	src := grade.FindRoot(wd)
	if src == "" {
		t.Fatal("not inside the course's checkout")
	}
	prog, err := playground()
	if err != nil {
		t.Fatal(err)
	}
	// The runner's packages and what they import from the module.
	list := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.Dir}}{{end}}", "./internal/labrun/...")
	list.Dir = src
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	root = t.TempDir()
	dirs := []string{"labs", "solutions/" + lab.ID}
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
	learner := withBug(t, src, lab, bug)
	if err := os.WriteFile(filepath.Join(root, "labs", lab.ID, lab.File), []byte(learner), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, prog
}

// withBug is the lab's reference solution with one of its learner bugs
// (solutions/<lab>/testdata/bugs/<bug>.patch) applied.
func withBug(t *testing.T, src string, lab lessons.Lab, bug string) string {
	t.Helper()
	name := filepath.Join("solutions", lab.ID, "testdata", "bugs", bug+".patch")
	text, err := os.ReadFile(filepath.Join(src, name))
	if err != nil {
		t.Fatal(err)
	}
	p, err := grade.ParsePatch(name, string(text))
	if err != nil {
		t.Fatal(err)
	}
	sol, err := os.ReadFile(filepath.Join(src, "solutions", lab.ID, lab.File))
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Apply(string(sol))
	if err != nil {
		t.Fatalf("%s no longer applies to the solution: %v", name, err)
	}
	return out
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

// TestFaultsFullHelp: ? in the faults view lists its keys, not the lab
// screen's (the view's own, and the timeline's once a run ended:
// faults.TestFullHelpAfterARun).
func TestFaultsFullHelp(t *testing.T) {
	m := New(testContext(), Options{Lab: lessons.Lab{ID: "07_election", Title: "A leader loop", File: "election.go"}, Root: t.TempDir()})
	m.SetSize(80, 24)
	m = runCmd(t, m, m.Init())
	m.faults.Open()
	var helps []string
	for _, col := range m.FullHelp() {
		for _, b := range col {
			helps = append(helps, b.Help().Key+" "+b.Help().Desc)
		}
	}
	if got := strings.Join(helps, "; "); !strings.Contains(got, "enter run it with your code") || strings.Contains(got, "grade") {
		t.Fatalf("the faults view's full help: %s", got)
	}
}
