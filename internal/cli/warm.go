package cli

import "github.com/charmbracelet/x/ansi"

// warmWidths makes the terminal renderer's first frame cheap. Measuring
// the first non-ASCII character in the wcwidth mode the renderer uses
// builds go-runewidth's lookup table of every rune, about 7 ms that fell
// inside the first frame. Run in the background while the program waits
// for its first frame tick, it costs the frame nothing.
func warmWidths() { _ = ansi.WcWidth.StringWidth("›●○–·") }
