package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// truncate cuts s to w cells, marking the cut.
func truncate(s string, w int) string {
	if w <= 0 {
		return ""
	}
	return ansi.Truncate(s, w, "…")
}

func spaces(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat(" ", n)
}

// fit pads or cuts s to exactly h lines of at most w cells, so the chrome
// below a screen always stays in place and nothing overflows.
func fit(s string, w, h int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		if ansi.StringWidth(l) > w {
			lines[i] = ansi.Truncate(l, w, "")
		}
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}

// wrap folds plain or styled text to w cells.
func wrap(s string, w int) string {
	if w < 1 {
		return s
	}
	return ansi.Wrap(s, w, "")
}
