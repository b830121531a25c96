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

// padLeft indents every line by n spaces: the screen's outer margin,
// without a lipgloss pass over the whole frame on every key.
func padLeft(s string, n int) string {
	pad := spaces(n)
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
}

// columns puts blocks side by side, each fitted to its width and h lines,
// joined by sep. It is JoinHorizontal for blocks whose sizes are known,
// measuring each line once.
func columns(h int, sep string, blocks ...block) string {
	split := make([][]string, len(blocks))
	for i, b := range blocks {
		split[i] = strings.Split(fit(b.text, b.w, h), "\n")
	}
	var out strings.Builder
	for row := range h {
		for i, b := range blocks {
			line := split[i][row]
			out.WriteString(line)
			if i < len(blocks)-1 {
				out.WriteString(spaces(b.w - ansi.StringWidth(line)))
				out.WriteString(sep)
			}
		}
		if row < h-1 {
			out.WriteByte('\n')
		}
	}
	return out.String()
}

// block is one column for columns.
type block struct {
	text string
	w    int
}

// window returns h lines of lines from offset: the visible part of a
// scrolled text, without the viewport's own lipgloss rendering.
func window(lines []string, offset, h int) string {
	offset = max(min(offset, len(lines)-h), 0)
	end := min(offset+h, len(lines))
	return strings.Join(lines[offset:end], "\n")
}

// reflow joins the lines of each paragraph of a prompt written over several
// YAML lines, so it wraps to the screen rather than to the file. Paragraphs
// that look laid out by hand (indented, lists, code) are kept as they are.
func reflow(s string) string {
	paras := strings.Split(strings.TrimSpace(s), "\n\n")
	for i, p := range paras {
		laidOut := false
		for _, l := range strings.Split(p, "\n") {
			t := strings.TrimLeft(l, " \t")
			if t != l || strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ") || strings.HasPrefix(t, "```") || strings.HasPrefix(t, "|") {
				laidOut = true
				break
			}
		}
		if !laidOut {
			paras[i] = strings.Join(strings.Fields(p), " ")
		}
	}
	return strings.Join(paras, "\n\n")
}
