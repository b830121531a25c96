package timeline

import "charm.land/bubbles/v2/key"

// KeyMap is the timeline's bindings: they move its cursor.
type KeyMap struct {
	Earlier key.Binding
	Later   key.Binding
	First   key.Binding
	Last    key.Binding
	NextKey key.Binding
}

// DefaultKeyMap returns the bindings: ←/→ (h/l) an item, home/end (g/G)
// the ends, v the next violation or refused write.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Earlier: key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←/→", "timeline")),
		Later:   key.NewBinding(key.WithKeys("right", "l")),
		First:   key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("home/end", "first/latest")),
		Last:    key.NewBinding(key.WithKeys("end", "G")),
		NextKey: key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "next violation")),
	}
}

// ShortHelp lists the bindings with help: Later and Last share the help
// of Earlier and First.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Earlier, k.First, k.NextKey}
}

// FullHelp lists the same bindings, in one column.
func (k KeyMap) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

// all is every binding, with or without help.
func (k KeyMap) all() []key.Binding {
	return []key.Binding{k.Earlier, k.Later, k.First, k.Last, k.NextKey}
}
