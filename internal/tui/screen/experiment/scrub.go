package experiment

import (
	"slices"

	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/tui/timeline"
)

// Scrubbing: the cursor is on the newest item while a run is live (it
// follows the run), or on the item the learner moved it to. The lanes'
// labels, the replica cards, "etcd holds" and the resource line show the
// state at the cursor. The timeline component keeps the cursor (m.tl);
// the snapshot says what it draws.

// timeline is the timeline component with the snapshot's run in it.
func (m Model) timeline() timeline.Model {
	var names []string
	retired := map[string]bool{}
	for _, r := range m.snap.all {
		names = append(names, r.Name)
		retired[r.Name] = r.Role == experiment.RoleRetired
	}
	if len(names) == 0 {
		for _, r := range m.snap.replicas {
			names = append(names, r.Name)
		}
	}
	if len(names) == 0 {
		// No replica reported (flapping-link's members): the lanes in
		// name order, m1 m2 m3, not in the order the members first
		// answered, which changes from run to run.
		names = timeline.ReplicaNames(m.snap.events)
		slices.Sort(names)
	}
	t := m.tl
	t.KeyMap = m.keys.KeyMap
	t.SetStyles(m.Styles)
	t.SetRun(timeline.Run{
		Events: m.snap.events, Names: names, Retired: retired,
		OwnRules: m.sc != nil && m.sc.OwnRules,
		Running:  m.phase == phaseRunning, Ended: m.phase == phaseDone,
		Selected: m.selected(), Reported: slices.Concat(m.snap.all, m.snap.replicas),
	})
	return t
}

// isLive reports whether the screen shows the run as it is now: the
// cursor follows a running run.
func (m Model) isLive() bool { return m.timeline().Following() }

// scrubKey moves the timeline's cursor, when msg is one of its keys.
func (m Model) scrubKey(msg tea.KeyPressMsg) (Model, bool) {
	t := m.timeline()
	if !t.Handles(msg) {
		return m, false
	}
	m.tl, _ = t.Update(msg)
	if n := m.tl.Notice(); n != "" {
		m.notice = n
	}
	return m, true
}

// cardStates are the replica cards at the cursor (timeline.Model.Cards).
func (m Model) cardStates() []experiment.ReplicaState {
	return m.timeline().Cards(m.snap.replicas)
}

// selected is the name of the replica fault keys act on.
func (m Model) selected() string {
	if m.sel < len(m.snap.replicas) {
		return m.snap.replicas[m.sel].Name
	}
	return ""
}
