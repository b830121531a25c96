package cli

import (
	"time"

	tea "charm.land/bubbletea/v2"
)

// keyFlood drops key presses that arrive faster than anyone types. A
// terminal without bracketed paste delivers pasted text as one key press a
// character, and every key press costs the root model an Update (and the
// screen it reaches a step: a page turn, a save); a megabyte pasted by
// mistake kept the program busy for minutes. No screen takes free text
// longer than a few characters, so nothing typed by hand is lost: key
// repeat stays far under the limit. Ctrl-C always passes.
type keyFlood struct {
	now    func() time.Time
	window time.Time // start of the current window
	n      int       // key presses seen in it
}

const (
	floodWindow = 100 * time.Millisecond
	floodKeys   = 30 // per window: 300 a second, ten times fast key repeat
)

func newKeyFlood() *keyFlood { return &keyFlood{now: time.Now} }

// filter is a tea.WithFilter function.
func (f *keyFlood) filter(_ tea.Model, msg tea.Msg) tea.Msg {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return msg
	}
	if k.String() == "ctrl+c" {
		return msg
	}
	now := f.now()
	if now.Sub(f.window) >= floodWindow {
		f.window, f.n = now, 0
	}
	f.n++
	if f.n > floodKeys {
		return nil
	}
	return msg
}
