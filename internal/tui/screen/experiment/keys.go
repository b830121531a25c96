package experiment

import (
	"charm.land/bubbles/v2/key"

	"github.com/ownership-election/playground/internal/tui/timeline"
)

// KeyMap is the experiment screen's bindings; the timeline's (Earlier,
// Later, First, Last, NextKey) are its component's.
type KeyMap struct {
	timeline.KeyMap
	Start     key.Binding
	Step      key.Binding
	AutoPlay  key.Binding
	Tempo     key.Binding
	Prev      key.Binding
	Next      key.Binding
	Pause     key.Binding
	Crash     key.Binding
	Restart   key.Binding
	Partition key.Binding
	SlowClock key.Binding
	Fencing   key.Binding
	Unlock    key.Binding
	TTLUp     key.Binding
	TTLDown   key.Binding
	Choose    key.Binding
}

// DefaultKeyMap returns the bindings.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		KeyMap:    timeline.DefaultKeyMap(),
		Start:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "run")),
		Step:      key.NewBinding(key.WithKeys("space", "n"), key.WithHelp("space", "next step")),
		AutoPlay:  key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "auto-play")),
		Tempo:     key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "auto-play tempo")),
		Prev:      key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("tab", "replica")),
		Next:      key.NewBinding(key.WithKeys("tab")),
		Pause:     key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause")),
		Crash:     key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "crash")),
		Restart:   key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "restart")),
		Partition: key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "partition")),
		SlowClock: key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "slow clock")),
		Fencing:   key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "fencing")),
		Unlock:    key.NewBinding(key.WithKeys("u"), key.WithHelp("u", "versioned unlock")),
		TTLUp:     key.NewBinding(key.WithKeys("+", "="), key.WithHelp("+/-", "TTL")),
		TTLDown:   key.NewBinding(key.WithKeys("-")),
		Choose:    key.NewBinding(key.WithKeys("1", "2", "3", "4", "5", "6"), key.WithHelp("1-6", "predict")),
	}
}

// ShortHelp lists the keys that matter most.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Start, k.Step, k.Earlier, k.Prev, k.Pause, k.NextKey}
}

// shortHelpIn is the one-line help in phase p: only the keys that act
// then, so that with the global keys after them (esc back, ? help) the
// line fits 80 columns; ? lists them all. While a run goes, space comes
// second, as in ShortHelp.
func (k KeyMap) shortHelpIn(p phase, auto, replicas bool) []key.Binding {
	switch p {
	case phasePredict:
		return []key.Binding{k.Choose}
	case phaseRunning:
		step := k.Step
		if auto {
			step.SetHelp("space", "step now")
		}
		if !replicas {
			return []key.Binding{k.Earlier, step}
		}
		return []key.Binding{k.Earlier, step, k.Prev, k.Pause}
	case phaseStarting:
		return nil
	}
	mode := k.AutoPlay
	if auto {
		mode.SetHelp("a", "step mode")
	}
	if !replicas {
		return []key.Binding{k.Start, mode, k.Earlier}
	}
	return []key.Binding{k.Start, mode, k.Earlier, k.TTLUp}
}

// FullHelp lists every key.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Start, k.Step, k.AutoPlay, k.Tempo, k.Choose},
		{k.Earlier, k.First, k.NextKey},
		{k.Prev, k.Pause, k.Crash, k.Restart, k.Partition, k.SlowClock},
		{k.Fencing, k.Unlock, k.TTLUp},
	}
}

// fullHelpWithout is FullHelp for a scenario with no replicas: no fault
// keys and no TTL, which would act on nothing.
func (k KeyMap) fullHelpWithout() [][]key.Binding {
	return [][]key.Binding{
		{k.Start, k.Step, k.AutoPlay, k.Tempo, k.Choose},
		{k.Earlier, k.First, k.NextKey},
	}
}
