package theme

import (
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
)

// GlobalKeys are the bindings every screen honours. The root model handles
// Quit (ctrl+c) and Help before any screen sees a key; Back and Quit-from-home
// are handled by the root as well, so a child screen only lists them in its
// help.
type GlobalKeys struct {
	Help      key.Binding // toggle the full key help of the current screen
	Back      key.Binding // go back one screen
	Quit      key.Binding // leave the program (from the home screen)
	ForceQuit key.Binding // leave the program from anywhere
	Progress  key.Binding // open the progress view (P: p pages back and pauses)
	// NextLab opens the next lab not passed yet, once the watched lab
	// passes; no screen uses o.
	NextLab key.Binding
}

// DefaultGlobalKeys returns the shared bindings.
func DefaultGlobalKeys() GlobalKeys {
	return GlobalKeys{
		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Back:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Quit:      key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit")),
		ForceQuit: key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit now")),
		Progress:  key.NewBinding(key.WithKeys("P"), key.WithHelp("P", "progress")),
		NextLab:   key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "next lab")),
	}
}

// NavKeys are the movement bindings lists and readers share, so that the
// same keys move the same way on every screen.
type NavKeys struct {
	Up       key.Binding
	Down     key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Top      key.Binding
	Bottom   key.Binding
	Select   key.Binding
}

// DefaultNavKeys returns the shared movement bindings.
func DefaultNavKeys() NavKeys {
	return NavKeys{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "b"), key.WithHelp("pgup/b", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "space", "f"), key.WithHelp("pgdn/space", "page down")),
		Top:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/home", "top")),
		Bottom:   key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", "bottom")),
		Select:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open")),
	}
}

// Scroll moves vp for a movement key (line, page, top, bottom) and
// reports whether k was one.
func (n NavKeys) Scroll(vp *viewport.Model, k tea.KeyPressMsg) bool {
	switch {
	case key.Matches(k, n.Down):
		vp.ScrollDown(1)
	case key.Matches(k, n.Up):
		vp.ScrollUp(1)
	case key.Matches(k, n.PageDown):
		vp.PageDown()
	case key.Matches(k, n.PageUp):
		vp.PageUp()
	case key.Matches(k, n.Top):
		vp.GotoTop()
	case key.Matches(k, n.Bottom):
		vp.GotoBottom()
	default:
		return false
	}
	return true
}
