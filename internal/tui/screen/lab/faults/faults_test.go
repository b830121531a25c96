package faults

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun"
	"github.com/ownership-election/playground/internal/tui/theme"
)

// newView is the faults view of lab at the size the lab screen gives it
// at 80x24, closed.
func newView(t *testing.T, lab string) *Model {
	t.Helper()
	m := New(Options{Lab: lab, Root: t.TempDir()}, theme.NewStyles(true, true))
	m.SetSize(80, 19)
	return &m
}

// TestViolationMarkedInFold: a lab checker's finding that falls among
// events the timeline folds (etcd's key changes) gets a mark of its own,
// so the timeline opens at its time rather than at the fold's end; the
// recorded history keeps only what the run recorded.
func TestViolationMarkedInFold(t *testing.T) {
	var events []history.Event
	for i := range 6 {
		events = append(events, history.Event{At: time.Duration(i) * 500 * time.Millisecond, Kind: history.KeyChanged, Text: "put group/shards/000"})
	}
	left := history.Finding{Property: "released-on-stop", Violation: "left-behind", At: 1800 * time.Millisecond, Timed: true, Replicas: []string{"r2"},
		Text: "left-behind at 1.80 s: r2's code returned at 1.30 s without deleting its key group/shards/000"}
	h := history.History{Events: events, Verdict: &history.Verdict{Findings: []history.Finding{
		{Property: "no-failure", Held: true, Text: "the rest"}, left}}}
	m := newView(t, "09_shards")
	m.seq = 1
	m.runs[0] = &faultRun{schedule: "calm", started: time.Now()}
	m.faultDone(faultDoneMsg{seq: 1, code: 1, history: &h})
	r := m.runs[0]
	if r.view == nil {
		t.Fatal("no timeline")
	}
	if got := r.view.At(); got != 1800*time.Millisecond {
		t.Fatalf("the timeline opened at %v, want the violation's 1.8s", got)
	}
	if len(r.history.Events) != len(events) {
		t.Fatalf("the recorded history has %d events, want the run's %d", len(r.history.Events), len(events))
	}
	marked := markViolation(h, left)
	if e := marked.Events[4]; e.Kind != history.InvariantViolated || e.Replica != "r2" || !strings.HasPrefix(e.Text, "Left-behind at 1.80 s") {
		t.Fatalf("the mark is %+v", e)
	}
	if again := markViolation(marked, left); len(again.Events) != len(marked.Events) {
		t.Fatal("a violation the run recorded itself was marked again")
	}
}

// TestRunWithoutHistorySaysWhy: a child that ends without a word and
// without writing its history is reported as such, not as a run that
// "ended without saying why"; a child that said why (a lab that does not
// compile) is shown in its words, without the exit status it implies.
func TestRunWithoutHistorySaysWhy(t *testing.T) {
	ch := make(chan tea.Msg, 1)
	runChild(context.Background(), exec.Command("true", recordFile()), 1, ch)
	done := (<-ch).(faultDoneMsg)
	if done.history != nil || done.err == nil || !strings.Contains(done.err.Error(), "read the run's history") {
		t.Fatalf("a child that wrote no history: history %v, err %v", done.history, done.err)
	}
	// One that printed its build's progress and exited 0 without a
	// history is no better explained by what it printed.
	runChild(context.Background(), exec.Command("sh", "-c", "echo building the replica program >&2", recordFile()), 1, ch)
	done = (<-ch).(faultDoneMsg)
	if done.err == nil || !strings.Contains(done.err.Error(), "read the run's history") {
		t.Fatalf("a child that exited 0 after printing, with no history: err %v", done.err)
	}

	m := newView(t, "06_fenced_write")
	m.open, m.seq = true, 1
	m.runs[0] = &faultRun{schedule: "pause-owner", started: time.Now()}
	m.faultDone(faultDoneMsg{seq: 1, code: history.ExitCouldNotRun, stderr: "lab 06_fenced_write does not compile:\nlabs/06_fenced_write/fenced.go:30:9: syntax error"})
	view := ansi.Strip(m.View())
	for _, want := range []string{"Your code under pause-owner: no verdict", "fenced.go:30:9: syntax error"} {
		if !strings.Contains(view, want) {
			t.Fatalf("the view does not say %q:\n%s", want, view)
		}
	}
	if strings.Contains(view, "exit 2") {
		t.Fatalf("the view gives the exit status the message already implies:\n%s", view)
	}
}

// TestFullHelpAfterARun: ? in the faults view lists its keys, and the
// timeline's once a run ended (the lab screen's TestFaultsFullHelp: and
// not the lab screen's).
func TestFullHelpAfterARun(t *testing.T) {
	m := newView(t, "07_election")
	m.Open()
	helps := func() []string {
		var out []string
		for _, col := range m.FullHelp() {
			for _, b := range col {
				out = append(out, b.Help().Key+" "+b.Help().Desc)
			}
		}
		return out
	}
	if got := strings.Join(helps(), "; "); !strings.Contains(got, "enter run it with your code") || strings.Contains(got, "grade") {
		t.Fatalf("the faults view's full help: %s", got)
	}
	h := history.History{Events: []history.Event{{At: time.Second, Kind: history.Note, Replica: "r1", Text: "started"}}, Verdict: &history.Verdict{Showed: true, Summary: "Every property held."}}
	m.seq = 1
	m.runs[0] = &faultRun{schedule: "calm", started: time.Now()}
	m.faultDone(faultDoneMsg{seq: 1, history: &h})
	if got := strings.Join(helps(), "; "); !strings.Contains(got, "next violation") {
		t.Fatalf("the full help after a run lacks the timeline's keys: %s", got)
	}
}

// TestReadRecordReadsALabRun: the history a child records names a lab
// run, which the lab registry knows and the scenario catalog does not.
// Read through the catalog, every run ended "no verdict (exit 0)".
func TestReadRecordReadsALabRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	h := history.History{Format: history.HistoryFormat, Scenario: labrun.ScenarioName("07_election")}
	if err := history.Write(f, h); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got, err := readRecord(path)
	if err != nil || got.Scenario != h.Scenario {
		t.Fatalf("readRecord = %q, %v; want the lab run's history", got.Scenario, err)
	}
}

// TestFirstBuildShowsItsProgress: while the child builds the replica
// program, its {"kind":"build"} lines are not events: the running view
// shows how far the build has come (time, packages, the last one), and
// no event is counted for them.
func TestFirstBuildShowsItsProgress(t *testing.T) {
	ch := make(chan tea.Msg, 4)
	line := string(labrun.BuildProgress{Elapsed: 72 * time.Second, Packages: 143, Current: "go.etcd.io/etcd/client/v3"}.JSONLine("05_etcd_lock"))
	go runChild(context.Background(), exec.Command("sh", "-c", "echo '"+line+"'", recordFile()), 1, ch)
	msg := (<-ch).(faultMsg)
	<-ch // its end
	if msg.build == nil || msg.build.Packages != 143 || msg.build.Current != "go.etcd.io/etcd/client/v3" {
		t.Fatalf("the build line came as %+v", msg)
	}
	m := newView(t, "05_etcd_lock")
	m.open, m.seq, m.width, m.height = true, 1, 120, 20
	m.runs[0] = &faultRun{schedule: "pause-owner", started: time.Now()}
	m.showing = 0
	m.faultEvent(msg)
	view := ansi.Strip(m.View())
	if !strings.Contains(view, "1m12s, 143 packages compiled, last go.etcd.io/etcd/client/v3") || !strings.Contains(view, "0 events") {
		t.Fatalf("the running view during a first build:\n%s", view)
	}
}
