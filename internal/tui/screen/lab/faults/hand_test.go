package faults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun"
	"github.com/ownership-election/playground/internal/testwait"
)

// sentLines is a child's standard input as a test sees it, written by
// the control pipe's goroutine while the test reads it.
type sentLines struct{ testwait.Buffer }

func (s *sentLines) Close() error { return nil }

// handRun is the faults view of a lab screen at 80x24 in a run of
// schedule whose child reads control (its replicas r1 to r3 running), and
// its key presser.
func handRun(t *testing.T, schedule string, control io.WriteCloser) (*Model, *faultRun, func(k string)) {
	t.Helper()
	m := newView(t, "07_election")
	m.open, m.seq = true, 1
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	r := &faultRun{schedule: schedule, started: time.Now(), control: newControlPipe(ctx, control)}
	m.runs[0] = r
	for _, n := range []string{"r1", "r2", "r3"} {
		r.events = append(r.events, history.Event{Kind: history.Note, Replica: n, Text: "runs the lab's code"})
	}
	press := func(k string) {
		t.Helper()
		msg := tea.KeyPressMsg{Code: rune(k[0]), Text: k}
		if k == "tab" {
			msg = tea.KeyPressMsg{Code: tea.KeyTab}
		}
		*m, _ = m.Update(msg)
	}
	return m, r, press
}

// endedRun is handRun's run of schedule once it has ended and held, its
// history two steps and faults; r then runs the reference on a child
// that ends at once (and removes the --faults file written for it).
func endedRun(t *testing.T, schedule string, faults ...history.Event) (*Model, history.History, func(k string)) {
	t.Helper()
	m, _, press := handRun(t, schedule, &sentLines{})
	m.opts.Program = "true"
	h := history.History{Format: history.HistoryFormat, Scenario: labrun.ScenarioName("07_election"), Events: append([]history.Event{
		{Kind: history.Phase, Step: 1, Text: "start 3 replicas"},
		{At: 2 * time.Second, Kind: history.Phase, Step: 2, Text: "schedule " + schedule},
	}, faults...), Verdict: &history.Verdict{Showed: true, Summary: "Every property held."}}
	m.faultDone(faultDoneMsg{seq: 1, history: &h})
	return m, h, press
}

// sentAre waits until the child has been sent want.
func sentAre(t *testing.T, sent *sentLines, want string) {
	t.Helper()
	testwait.Until(t, 10*time.Second, fmt.Sprintf("the lines %q", want), func() bool { return sent.String() == want },
		func() string { return fmt.Sprintf("sent %q", sent.String()) })
}

// TestFaultsByHand: during a run, tab picks a replica and p, x, c and r
// send the child the fault for the state the replica's events say it is
// in (a paused one is resumed, a crashed one only restarted); the view
// says which replica the keys act on.
func TestFaultsByHand(t *testing.T) {
	sent := &sentLines{}
	m, r, press := handRun(t, "calm", sent)
	if v := ansi.Strip(m.View()); !strings.Contains(v, "your faults on r1: p pause") {
		t.Fatalf("the view does not say where the keys act:\n%s", v)
	}
	press("p")
	r.events = append(r.events, history.Event{Kind: history.Paused, Replica: "r1"})
	press("p")
	press("tab")
	press("x")
	press("tab")
	press("r") // not crashed: nothing to restart
	press("c")
	r.events = append(r.events, history.Event{Kind: history.Crashed, Replica: "r3"})
	press("p") // crashed: nothing to pause
	press("r")
	sentAre(t, sent, "pause r1\nresume r1\ncut r2\ncrash r3\nrestart r3\n")
	if v := ansi.Strip(m.View()); !strings.Contains(v, "r3 crashed · r restart") {
		t.Fatalf("the view does not say r3 crashed:\n%s", v)
	}
}

// helpLine is the one-line help as the keys' own words (the lab screen's
// while the view is open).
func helpLine(m *Model) string {
	var out []string
	for _, b := range m.ShortHelp() {
		out = append(out, b.Help().Key+" "+b.Help().Desc)
	}
	return strings.Join(out, " · ")
}

// TestEndByHand: in a by-hand run the view and the help offer e, which
// sends the child end, once; the view then says the run is ending, the
// help no longer offers e, and the run's end shows its verdict. A run
// that ends by itself offers no e, and e there sends nothing.
func TestEndByHand(t *testing.T) {
	sent := &sentLines{}
	m, r, press := handRun(t, labrun.ByHand, sent)
	if v := ansi.Strip(m.View()); !strings.Contains(v, "the run goes on until you end it: e (5 minutes at most)") {
		t.Fatalf("the view does not say how the run ends:\n%s", v)
	}
	if h := helpLine(m); !strings.Contains(h, "e end run") {
		t.Fatalf("the help does not offer e: %s", h)
	}
	var full []string
	for _, col := range m.FullHelp() {
		for _, b := range col {
			full = append(full, b.Help().Key+" "+b.Help().Desc)
		}
	}
	if !slices.Contains(full, "e end the run (by-hand)") {
		t.Fatalf("? does not list e: %v", full)
	}
	press("p")
	press("e")
	press("e")
	sentAre(t, sent, "pause r1\nend\n")
	if v := ansi.Strip(m.View()); !strings.Contains(v, "ended: a watch, then every replica is told to stop") {
		t.Fatalf("the view does not say the run is ending:\n%s", v)
	}
	if h := helpLine(m); strings.Contains(h, "end run") {
		t.Fatalf("the help still offers e once the run was ended: %s", h)
	}
	h := history.History{Events: slices.Clone(r.events), Verdict: &history.Verdict{Showed: true, Summary: "Every property held."}}
	m.faultDone(faultDoneMsg{seq: 1, history: &h})
	if v := ansi.Strip(m.View()); !strings.Contains(v, "Your code under by-hand: HELD") {
		t.Fatalf("the view does not show the verdict:\n%s", v)
	}

	other := &sentLines{}
	m, _, press = handRun(t, "calm", other)
	if v, h := ansi.Strip(m.View()), helpLine(m); strings.Contains(v, "until you end it") || strings.Contains(h, "end run") {
		t.Fatalf("a calm run offers e:\n%s\n%s", v, h)
	}
	press("e")
	press("p")
	sentAre(t, other, "pause r1\n")
}

// TestHandKeysNeverBlock: a child that never reads its input holds up
// neither Update nor the screen: the keys past what the pipe holds are
// not sent, and the view says so. Were a key's line written in Update,
// the first press would wait for ever on the pipe nobody reads.
func TestHandKeysNeverBlock(t *testing.T) {
	unread, w := io.Pipe()
	defer unread.CloseWithError(errors.New("the test is over")) // frees the writer
	m, r, press := handRun(t, "calm", w)
	// The first line is taken by the writer, which then waits on the
	// pipe for ever; until it has taken it, a later press may still find
	// room (on a busy machine the writer can start late), so wait for it.
	press("c")
	testwait.Until(t, time.Minute, "the writer to take the first line", func() bool { return len(r.control.lines) == 0 })
	for range 10 * controlBuffer {
		press("c")
	}
	if r.unsent != "crash r1" {
		t.Fatalf("after %d presses on a child that reads nothing, unsent is %q", 10*controlBuffer, r.unsent)
	}
	if v := ansi.Strip(m.View()); !strings.Contains(v, `not sent: "crash r1" (the run is not reading its input)`) {
		t.Fatalf("the view does not say the key was not sent:\n%s", v)
	}
}

// TestReferenceOnByHandFaults: r after a by-hand run runs the reference
// on the faults the learner did in it (--faults, from its history), not
// on another by-hand run, which would have none and wait to be ended;
// after a by-hand run without faults, on the schedule as after any run.
func TestReferenceOnByHandFaults(t *testing.T) {
	m, h, press := endedRun(t, labrun.ByHand,
		history.Event{At: 3 * time.Second, Kind: history.Paused, Step: 2, Replica: "r2", Origin: history.ByLearner},
		history.Event{At: 5 * time.Second, Kind: history.Resumed, Step: 2, Replica: "r2", Origin: history.ByLearner})
	press("r")
	ref := m.runs[1]
	if ref == nil || ref.replay == "" || ref.schedule != yourFaults || ref.endsByHand() {
		t.Fatalf("the reference's run after a by-hand run: %+v", ref)
	}
	cmd := m.faultCommand(t.Context(), ref)
	defer os.Remove(cmd.Args[len(cmd.Args)-1])
	if i := slices.Index(cmd.Args, "--faults"); i < 0 || cmd.Args[i+1] != ref.replay || slices.Contains(cmd.Args, "--schedule") {
		t.Fatalf("the reference's command line: %v", cmd.Args)
	}
	file, err := replayFile(h)
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(file)
	back, err := readRecord(file)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := labrun.FaultSchedule(&back), labrun.FaultSchedule(&h); !slices.Equal(got, want) || len(got) != 2 {
		t.Fatalf("the replay file's faults %+v, want %+v", got, want)
	}

	m, _, press = endedRun(t, labrun.ByHand)
	press("r")
	if ref := m.runs[1]; ref == nil || ref.replay != "" || ref.schedule != labrun.ByHand {
		t.Fatalf("the reference's run after a by-hand run without faults: %+v", ref)
	}
}

// TestReferenceOnYourFaultsToo: r after a named schedule's run in which
// the learner pressed fault keys runs the reference on all of that run's
// faults (the schedule's and the learner's, from its history); after one
// with the schedule's faults alone, on the schedule, which aims at
// whoever leads in the reference's own run.
func TestReferenceOnYourFaultsToo(t *testing.T) {
	for _, c := range []struct {
		origin history.Origin
		want   string
		replay bool
	}{
		{history.ByLearner, "pause-owner" + yourFaultsToo, true},
		{history.ByScript, "pause-owner", false},
	} {
		m, _, press := endedRun(t, "pause-owner",
			history.Event{At: 2 * time.Second, Kind: history.Paused, Step: 2, Replica: "r3", Origin: history.ByScript},
			history.Event{At: 3 * time.Second, Kind: history.Partitioned, Step: 2, Replica: "r1", Origin: c.origin})
		press("r")
		if ref := m.runs[1]; ref == nil || ref.schedule != c.want || (ref.replay != "") != c.replay {
			t.Fatalf("after a run with a %s cut: the reference's run %+v, want %q (replay %v)", c.origin, ref, c.want, c.replay)
		}
	}
}
