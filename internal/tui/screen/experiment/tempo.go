package experiment

import (
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/tui/screen"
)

// The screen runs every experiment in the engine's step mode and takes
// the steps itself: on space in step mode, and in auto-play once the
// script has waited at a step for the tempo. So auto-play leaves each
// step's consequence on screen for a while before the next fault, and the
// learner can make that while longer or shorter during the run.

// tempos are the auto-play tempos t cycles through, the time the screen
// leaves between the moment the script is ready for its next step and
// taking it; 0 takes it at once (the engine's own pace).
var tempos = []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second, 0}

// defaultTempo is the tempo of a new screen: long enough to read a line
// of the timeline before the next fault.
const defaultTempo = 4 * time.Second

// nextTempo is the tempo after d in tempos.
func nextTempo(d time.Duration) time.Duration {
	for i, t := range tempos {
		if t == d {
			return tempos[(i+1)%len(tempos)]
		}
	}
	return tempos[0]
}

// tempoLabel says a tempo in words: "4 s a step", or "no pause".
func tempoLabel(d time.Duration) string {
	if d <= 0 {
		return "no pause"
	}
	return fmt.Sprintf("%d s a step", int(d/time.Second))
}

// stepClock follows the step the script waits at: which one (the number
// of phases announced when it was first seen waiting) and since when.
type stepClock struct {
	phase int
	since time.Time
}

// phases counts the script's phases among the events the screen has.
func (m *Model) phases() int {
	n := 0
	for _, e := range m.snap.events {
		if e.Kind == history.Phase {
			n++
		}
	}
	return n
}

// autoStep takes the step the script waits at once auto-play has left it
// on screen for the tempo. It runs after every refresh.
func (m *Model) autoStep() {
	if !m.snap.atStep || m.run == nil {
		return
	}
	if n := m.phases(); n != m.step.phase || m.step.since.IsZero() {
		m.step = stepClock{phase: n, since: m.now()}
	}
	if m.auto() && m.now().Sub(m.step.since) >= m.tempo {
		m.run.Step()
		m.snap.atStep = false
	}
}

// auto reports whether the run plays on by itself (the learner's choice,
// which is also the next run's).
func (m Model) auto() bool { return !m.params.Step }

// nextStepIn is how long auto-play waits before it takes the step the
// script waits at; 0 when it waits for nothing.
func (m Model) nextStepIn() time.Duration {
	if !m.auto() || !m.snap.atStep || m.step.since.IsZero() {
		return 0
	}
	return max(0, m.tempo-m.now().Sub(m.step.since))
}

// knownTempo reports whether d is one of the tempos t offers (a saved
// tempo from another version is not).
func knownTempo(d time.Duration) bool {
	for _, t := range tempos {
		if t == d {
			return true
		}
	}
	return false
}

// nextTempo moves to the next tempo and tells the root, which keeps it
// for the screens after.
func (m Model) nextTempo() (Model, tea.Cmd) {
	m.tempo = nextTempo(m.tempo)
	return m, screen.Send(screen.TempoChosen{Tempo: m.tempo})
}
