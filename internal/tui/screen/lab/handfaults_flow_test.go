package lab

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun"
	"github.com/ownership-election/playground/internal/testwait"
	"github.com/ownership-election/playground/lessons"
)

// TestFlowByHand drives a by-hand run on lab 07's screen at 80x24 in a
// real program, its child a real playground: the run waits while the
// learner pauses r1 and wakes it, e ends it, and the screen shows the
// verdict from the run's history (the learner's file is the reference
// with its session never closed, which the shutdown shows). The history
// has the learner's faults and the end by hand.
func TestFlowByHand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the playground and runs a lab run")
	}
	t.Parallel()
	lab := lessons.Lab{ID: "07_election", Title: "A leader loop", File: "election.go"}
	root, prog := faultsCheckout(t, lab, "no_session_close")
	m := New(testContext(), Options{Lab: lab, Root: root, Program: prog})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := &handSeen{}
	tm := teatest.NewTestModel(t, handProbe{harness{lab: m, root: root, ctx: ctx, cancel: cancel}, seen},
		teatest.WithInitialTermSize(80, 24),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	waitFor(t, tm, "Not graded yet")
	tm.Type("x")
	waitFor(t, tm, "Run your code under faults", says("pause-owner"))
	pickSchedule(tm, -3) // by-hand, before calm and explore at the end
	waitFor(t, tm, says(labrun.ByHand))
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	// The renderer redraws only the cells that changed, so what the
	// events say is awaited in the model; the verdict's heading is drawn
	// whole.
	seen.until(t, "the by-hand step", func(f handFacts) bool { return f.phase })
	tm.Type("p")
	seen.until(t, "r1 paused", func(f handFacts) bool { return f.paused })
	tm.Type("p")
	seen.until(t, "r1 resumed", func(f handFacts) bool { return f.resumed })
	tm.Type("e")
	waitRun(t, tm, "Your code under by-hand: VIOLATION", "Left-behind at")
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(handProbe)
	mine, _ := fm.lab.faults.Run(false)
	h := mine.History
	if h == nil {
		t.Fatal("no history of the by-hand run")
	}
	var faults []string
	ended := false
	for _, e := range h.Events {
		if e.Kind.IsFault() && e.Origin == history.ByLearner {
			faults = append(faults, string(e.Kind)+" "+e.Replica)
		}
		ended = ended || e.Kind == history.Note && strings.Contains(e.Text, "ended by hand")
	}
	if got := strings.Join(faults, ", "); got != "paused r1, resumed r1" || !ended {
		t.Fatalf("the history's faults by hand: %q; ended by hand: %v", got, ended)
	}
}

// handFacts are what a by-hand flow's model has seen of its run so far:
// the by-hand step, r1 paused, r1 resumed.
type handFacts struct{ phase, paused, resumed bool }

// handSeen is handFacts as the program notes them and the test reads.
type handSeen struct {
	mu sync.Mutex
	handFacts
}

// until waits for cond on what was seen.
func (s *handSeen) until(t *testing.T, what string, cond func(f handFacts) bool) {
	t.Helper()
	testwait.Until(t, runWait, what, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return cond(s.handFacts)
	})
}

// handProbe is the harness, noting after each message what its run's
// events say, for the test to wait on.
type handProbe struct {
	harness
	seen *handSeen
}

func (p handProbe) Init() tea.Cmd { return p.lab.Init() } // no prewarm: x does not need it

func (p handProbe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	h, cmd := p.harness.Update(msg)
	p.harness = h.(harness)
	r, ok := p.lab.faults.Run(false)
	if !ok {
		return p, cmd
	}
	p.seen.mu.Lock()
	defer p.seen.mu.Unlock()
	for _, e := range r.Events {
		switch {
		case e.Kind == history.Phase && strings.Contains(e.Text, "schedule by-hand"):
			p.seen.phase = true
		case e.Kind == history.Paused && e.Replica == "r1":
			p.seen.paused = true
		case e.Kind == history.Resumed && e.Replica == "r1":
			p.seen.resumed = true
		}
	}
	return p, cmd
}
