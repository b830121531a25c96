package faults

import "charm.land/bubbles/v2/key"

// KeyMap is the faults view's bindings. Up and Down pick a schedule
// (Choose names them in the help), Run starts it with the learner's code,
// Reference runs the reference on it (then switches between the two),
// Schedules shows the list again, Back goes back to the lab (and stops a
// run); Hand are the faults a learner injects during a run (hand.go).
type KeyMap struct {
	Up        key.Binding
	Down      key.Binding
	Choose    key.Binding
	Run       key.Binding
	Reference key.Binding
	Schedules key.Binding
	Back      key.Binding
	Hand      HandKeys
}

// DefaultKeyMap returns the faults view's bindings.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:        key.NewBinding(key.WithKeys("up", "k")),
		Down:      key.NewBinding(key.WithKeys("down", "j")),
		Choose:    key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓", "choose step")),
		Run:       key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "run")),
		Reference: key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "reference")),
		Schedules: key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "faults")),
		Back:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Hand:      defaultHandKeys(),
	}
}

// ShortHelp is the view's one-line help for its state.
func (m Model) ShortHelp() []key.Binding {
	k := m.keys
	if m.choosing {
		return []key.Binding{withHelp(k.Choose, "schedule"), k.Run, k.Back}
	}
	if m.Running() {
		return append(m.handHelp(), withHelp(k.Back, "stop"))
	}
	ref := k.Reference
	if m.runs[1] != nil {
		ref = withHelp(ref, "yours/reference")
	}
	var out []key.Binding
	if r := m.runs[m.showing]; r != nil && r.schedule == exploreEntry {
		// An exploration runs the reference itself: no r (Update
		// ignores it), even when it ended without a report.
		if r.explore != nil {
			out = append(out, exploreKeys.Switch, exploreKeys.Replay)
			if r.view != nil && !r.explore.grid {
				out = append(out, r.view.KeyMap.ShortHelp()...)
			}
		}
		return append(out, withHelp(k.Schedules, "schedules"), k.Back)
	}
	if r := m.runs[m.showing]; r != nil && r.view != nil {
		out = append(out, r.view.KeyMap.ShortHelp()...)
	}
	return append(out, ref, withHelp(k.Schedules, "schedules"), k.Back)
}

// FullHelp is the view's keys: the schedule list's and a run's, then
// the timeline's (during a run too, once it has drawn one).
func (m Model) FullHelp() [][]key.Binding {
	k := m.keys
	out := [][]key.Binding{{
		withHelp(k.Choose, "choose a schedule"), withHelp(k.Run, "run it with your code"),
		withHelp(k.Reference, "reference on the same schedule, then switch"), withHelp(k.Schedules, "the schedules again"),
		withHelp(k.Back, "stop the run, or back to the lab"),
	}}
	if hand := m.handFullHelp(); m.Running() && len(hand) > 0 {
		out = append(out, hand)
	}
	switch r := m.runs[m.showing]; {
	case r != nil && r.view != nil:
		out = append(out, r.view.KeyMap.ShortHelp())
	case r != nil && r.live != nil && m.Running():
		out = append(out, r.live.KeyMap.ShortHelp()) // back over the run so far
	}
	return out
}

// withHelp is b with a shorter description, for the one-line help.
func withHelp(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}
