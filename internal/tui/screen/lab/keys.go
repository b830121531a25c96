package lab

import (
	"charm.land/bubbles/v2/key"

	"github.com/ownership-election/playground/internal/tui/screen/lab/faults"
	"github.com/ownership-election/playground/internal/tui/theme"
)

// KeyMap is the lab runner's bindings. The root model owns ?, q and ctrl+c;
// esc is the root's "back" unless Capturing reports that this screen needs it
// (to cancel a grade or answer "no" to a question).
type KeyMap struct {
	// NavKeys scroll the active pane, as on every screen, except that g
	// grades here: Top is home alone.
	theme.NavKeys
	Grade    key.Binding
	Cancel   key.Binding
	Watch    key.Binding
	Hint     key.Binding
	Edit     key.Binding
	Solution key.Binding
	Reset    key.Binding
	Pane     key.Binding
	Yes      key.Binding
	No       key.Binding
	// The results pane's steps: Up and Down move between them, OpenStep
	// shows a step's whole output, CloseStep goes back to the list, and
	// PrevStep and NextStep show the others' while one is open.
	// ChooseStep only names Up and Down's use there in the full help.
	OpenStep   key.Binding
	CloseStep  key.Binding
	PrevStep   key.Binding
	NextStep   key.Binding
	ChooseStep key.Binding
	// Diff switches the solution pane between the diff of the learner's
	// file against the solution and the whole solution.
	Diff key.Binding
	// Report opens the verification's failing run (the race detector's
	// report for a racy lab) when a pass did not hold up.
	Report key.Binding
	// Faults opens the view of the learner's code under faults (labs
	// with a runner), whose keys are its own (faults.KeyMap).
	Faults key.Binding
}

// DefaultKeyMap returns the lab runner's bindings. "g" grades here, so the
// top of a pane is home only (the shared navigation keys use g for it).
func DefaultKeyMap() KeyMap {
	nav := theme.DefaultNavKeys()
	nav.Up.SetHelp("↑/k", "scroll up")
	nav.Down.SetHelp("↓/j", "scroll down")
	nav.Top = key.NewBinding(key.WithKeys("home"), key.WithHelp("home", "top"))
	nav.Bottom.SetHelp("end/G", "bottom")
	return KeyMap{
		NavKeys:  nav,
		Grade:    key.NewBinding(key.WithKeys("enter", "g"), key.WithHelp("enter/g", "grade")),
		Cancel:   key.NewBinding(key.WithKeys("x", "esc"), key.WithHelp("x/esc", "cancel")),
		Watch:    key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "watch saves")),
		Hint:     key.NewBinding(key.WithKeys("h"), key.WithHelp("h", "hint")),
		Edit:     key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "edit")),
		Solution: key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "solution")),
		Reset:    key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "reset stub")),
		Pane:     key.NewBinding(key.WithKeys("tab", "shift+tab"), key.WithHelp("tab", "pane")),
		Yes:      key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "yes")),
		No:       key.NewBinding(key.WithKeys("n", "N", "esc"), key.WithHelp("n/esc", "no")),

		OpenStep:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open step")),
		CloseStep:  key.NewBinding(key.WithKeys("esc", "backspace"), key.WithHelp("esc", "close step")),
		PrevStep:   key.NewBinding(key.WithKeys("left", "["), key.WithHelp("←", "prev step")),
		NextStep:   key.NewBinding(key.WithKeys("right", "]"), key.WithHelp("→", "next step")),
		ChooseStep: key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓", "choose step")),
		Diff:       key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "diff/whole")),
		Report:     key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "failing run")),

		Faults: key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "faults")),
	}
}

// ShortHelp is the one-line help for the screen's current state.
func (m Model) ShortHelp() []key.Binding {
	k := m.keys
	if m.watching {
		// A watch grade goes on when the learner leaves: esc is back.
		k.Cancel.SetHelp("x", "cancel")
		k.Watch.SetHelp("w", "watch off")
	}
	switch {
	case m.faults.IsOpen():
		return m.faults.ShortHelp()
	case m.confirm != confirmNone:
		return []key.Binding{k.Yes, k.No}
	case m.grading:
		return []key.Binding{k.Cancel, k.Watch, k.Pane}
	case !m.labsPresent:
		return []key.Binding{k.Pane, k.Down}
	}
	hint := k.Hint
	hint.SetEnabled(m.hintAvailable())
	switch {
	case m.reportOpen():
		return []key.Binding{onlyG(k.Grade), withHelp(k.Report, "steps"), k.Watch, k.Pane}
	case m.pane == paneResults && m.report.unsound():
		return []key.Binding{onlyG(k.Grade), withHelp(k.OpenStep, "step"), reportHelp(k.Report, m.report), k.Watch, k.Pane}
	case m.stepOpen():
		// enter and esc are the step's; g still grades.
		return []key.Binding{onlyG(k.Grade), withHelp(k.CloseStep, "steps"), withHelp(k.NextStep, "next"), hint, k.Watch, k.Pane}
	case m.pane == paneResults && m.report != nil:
		// e is in the full help: with enter's step the line would not
		// fit 80 columns.
		return []key.Binding{onlyG(k.Grade), withHelp(k.OpenStep, "step"), hint, k.Watch, k.Pane}
	case m.pane == paneSolution && m.solution != "":
		return []key.Binding{k.Grade, k.Diff, k.Edit, k.Pane}
	}
	if faults.HasRunner(m.lab.ID) {
		return []key.Binding{k.Grade, hint, k.Watch, k.Edit, k.Faults, k.Pane}
	}
	return []key.Binding{k.Grade, hint, k.Watch, k.Edit, k.Pane}
}

// reportHelp names what v opens: the race report of a racy lab.
func reportHelp(b key.Binding, r *report) key.Binding {
	if v := r.Lab.Verify; v != nil && v.Race {
		return withHelp(b, "race report")
	}
	return b
}

// onlyG is the grade key where enter opens a step: g alone.
func onlyG(b key.Binding) key.Binding {
	b.SetHelp("g", b.Help().Desc)
	return b
}

// withHelp is b with a shorter description, for the one-line help.
func withHelp(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}

// FullHelp is every binding of the screen, grouped in columns.
func (m Model) FullHelp() [][]key.Binding {
	k := m.keys
	if m.faults.IsOpen() {
		return m.faults.FullHelp()
	}
	if !m.labsPresent {
		return [][]key.Binding{
			{k.Pane, k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		}
	}
	// Three columns: a fourth does not fit 80 columns, so the steps'
	// keys go under grading's.
	return [][]key.Binding{
		{k.Grade, k.Cancel, k.Watch, k.Hint, k.ChooseStep, k.OpenStep, k.CloseStep, k.PrevStep, k.NextStep},
		{k.Edit, k.Solution, k.Diff, k.Reset, k.Report, k.Faults, k.Yes, k.No},
		{k.Pane, k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
	}
}
