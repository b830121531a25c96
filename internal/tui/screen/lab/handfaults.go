package lab

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/experiment"
)

// Faults by hand: while a run goes on, tab picks a replica and p, x, c
// and r do to it what the experiment screen's keys do to its replicas
// (pause or resume, cut off or heal, crash, restart). The run is in the
// child process, so a key becomes a line on its standard input
// (experiment run --control), and what the replica then did comes back
// as its events, like everything else the screen shows.

// HandKeys are the bindings of faults by hand.
type HandKeys struct {
	Pick    key.Binding
	Pause   key.Binding
	Cut     key.Binding
	Crash   key.Binding
	Restart key.Binding
}

func defaultHandKeys() HandKeys {
	return HandKeys{
		Pick:    key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "replica")),
		Pause:   key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause")),
		Cut:     key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "cut off")),
		Crash:   key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "crash")),
		Restart: key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "restart")),
	}
}

// replicaName is a lab run's replica ("r2"), not an etcd member.
var replicaName = regexp.MustCompile(`^r([0-9]+)$`)

// runReplicas are the replicas the run's events name so far, by number.
func runReplicas(events []experiment.Event) []string {
	var out []string
	for _, e := range events {
		if replicaName.MatchString(e.Replica) && !slices.Contains(out, e.Replica) {
			out = append(out, e.Replica)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return replicaNumber(a) - replicaNumber(b) })
	return out
}

func replicaNumber(name string) int {
	n, _ := strconv.Atoi(replicaName.FindStringSubmatch(name)[1])
	return n
}

// handState is what the replica's events say the faults left it: held
// paused, cut off, crashed.
type handState struct{ paused, cut, crashed bool }

func stateOf(events []experiment.Event, name string) handState {
	var s handState
	for _, e := range events {
		if e.Replica != name {
			continue
		}
		switch e.Kind {
		case experiment.Paused, experiment.Resumed:
			s.paused = e.Kind == experiment.Paused
		case experiment.Partitioned, experiment.Healed:
			s.cut = e.Kind == experiment.Partitioned
		case experiment.Crashed:
			s = handState{crashed: true}
		case experiment.Restarted:
			s.crashed = false
		}
	}
	return s
}

// picked is the replica faults by hand go to, and its state.
func (r *faultRun) picked() (string, handState, bool) {
	names := runReplicas(r.events)
	if len(names) == 0 || r.control == nil {
		return "", handState{}, false
	}
	name := names[r.pick%len(names)]
	return name, stateOf(r.events, name), true
}

// handKey sends the fault a key asks for to the running child.
func (m *Model) handKey(msg tea.KeyPressMsg) {
	r := m.faults.runs[m.faults.showing]
	if r == nil {
		return
	}
	name, s, ok := r.picked()
	if !ok {
		return
	}
	k := m.keys.Hand
	var verb string
	switch {
	case key.Matches(msg, k.Pick):
		r.pick = (r.pick + 1) % len(runReplicas(r.events))
		return
	case key.Matches(msg, k.Pause) && !s.crashed:
		verb = map[bool]string{false: "pause", true: "resume"}[s.paused]
	case key.Matches(msg, k.Cut) && !s.crashed:
		verb = map[bool]string{false: "cut", true: "heal"}[s.cut]
	case key.Matches(msg, k.Crash) && !s.crashed:
		verb = "crash"
	case key.Matches(msg, k.Restart) && s.crashed:
		verb = "restart"
	default:
		return
	}
	// A child that has ended reads no more: its verdict is on its way.
	fmt.Fprintf(r.control, "%s %s\n", verb, name)
}

// handLine says which replica the keys act on and what they would do,
// for the state its events say it is in.
func (m Model) handLine(r *faultRun) string {
	name, s, ok := r.picked()
	if !ok {
		return ""
	}
	switch {
	case s.crashed:
		return fmt.Sprintf("your faults: %s crashed · r restart · tab next replica", name)
	case s.paused:
		return fmt.Sprintf("your faults: %s paused · p resume · c crash · tab next replica", name)
	case s.cut:
		return fmt.Sprintf("your faults: %s cut off · x heal · c crash · tab next replica", name)
	}
	return fmt.Sprintf("your faults on %s: p pause · x cut off · c crash · tab next replica", name)
}

// handHelp is the one-line help of faults by hand during a run.
func (m Model) handHelp() []key.Binding {
	r := m.faults.runs[m.faults.showing]
	if r == nil {
		return nil
	}
	if _, _, ok := r.picked(); !ok {
		return nil
	}
	k := m.keys.Hand
	return []key.Binding{k.Pick, k.Pause, k.Cut, k.Crash, k.Restart}
}
