package screen

import (
	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/tui/theme"
)

// Base is what every screen has: its size, the shared styles, and the
// answers of a screen with nothing to add (no work to start, no title of
// its own, no status, esc and ? left to the root, nothing to release).
// A screen embeds it, as soft-serve's pages embed common.Common, and
// defines only the methods where it differs; a screen that must react to
// a new size or new styles defines SetSize or SetStyles and calls Base's.
type Base struct {
	// Width and Height are the body's size in cells (SetSize).
	Width, Height int
	// Styles are the program's styles, replaced when the background
	// colour is known (SetStyles).
	Styles theme.Styles
}

// NewBase is the base of a screen built with ctx, at 80x24 until the root
// sizes it.
func NewBase(ctx Context) Base { return Base{Width: 80, Height: 24, Styles: ctx.Styles} }

// SetSize records the body's size.
func (b *Base) SetSize(w, h int) { b.Width, b.Height = w, h }

// SetStyles records the styles.
func (b *Base) SetStyles(st theme.Styles) { b.Styles = st }

// Init starts nothing.
func (b *Base) Init() tea.Cmd { return nil }

// Title is "": the screen draws its own title line.
func (b *Base) Title() string { return "" }

// Status is "": the status line shows the root's news only.
func (b *Base) Status() string { return "" }

// Capturing is false: esc goes back.
func (b *Base) Capturing() bool { return false }

// Typing is false: the screen takes no free text, so ? and q are commands.
func (b *Base) Typing() bool { return false }

// Close releases nothing.
func (b *Base) Close() {}
