package lab

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/lessons"
)

// sentLines is a child's standard input as a test sees it.
type sentLines struct{ strings.Builder }

func (s *sentLines) Close() error { return nil }

// TestFaultsByHand: during a run, tab picks a replica and p, x, c and r
// send the child the fault for the state the replica's events say it is
// in (a paused one is resumed, a crashed one only restarted); the view
// says which replica the keys act on.
func TestFaultsByHand(t *testing.T) {
	m := New(testContext(), Options{Lab: lessons.Lab{ID: "07_election", Title: "A leader loop", File: "election.go"}, Root: t.TempDir()})
	m.SetSize(80, 24)
	m = runCmd(t, m, m.Init())
	sent := &sentLines{}
	m.faults.open, m.faults.seq = true, 1
	r := &faultRun{schedule: "calm", started: time.Now(), control: sent}
	m.faults.runs[0] = r
	for _, n := range []string{"r1", "r2", "r3"} {
		r.events = append(r.events, experiment.Event{Kind: experiment.Note, Replica: n, Text: "runs the lab's code"})
	}
	press := func(k string) {
		t.Helper()
		msg := tea.KeyPressMsg{Code: rune(k[0]), Text: k}
		if k == "tab" {
			msg = tea.KeyPressMsg{Code: tea.KeyTab}
		}
		m.Update(msg)
	}
	if v := ansi.Strip(m.View()); !strings.Contains(v, "your faults on r1: p pause") {
		t.Fatalf("the view does not say where the keys act:\n%s", v)
	}
	press("p")
	r.events = append(r.events, experiment.Event{Kind: experiment.Paused, Replica: "r1"})
	press("p")
	press("tab")
	press("x")
	press("tab")
	press("r") // not crashed: nothing to restart
	press("c")
	r.events = append(r.events, experiment.Event{Kind: experiment.Crashed, Replica: "r3"})
	press("p") // crashed: nothing to pause
	press("r")
	want := "pause r1\nresume r1\ncut r2\ncrash r3\nrestart r3\n"
	if sent.String() != want {
		t.Fatalf("sent %q, want %q", sent.String(), want)
	}
	if v := ansi.Strip(m.View()); !strings.Contains(v, "r3 crashed · r restart") {
		t.Fatalf("the view does not say r3 crashed:\n%s", v)
	}
}
