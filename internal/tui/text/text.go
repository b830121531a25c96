// Package text holds the TUI's text layout helpers: wrapping, hanging
// indents, truncation with an ellipsis, and fitting blocks to a size. Every
// screen lays text out with these, so a line is cut or folded the same way
// everywhere.
package text

import (
	"regexp"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Truncate cuts s to w cells, marking the cut with an ellipsis.
func Truncate(s string, w int) string {
	if w <= 0 {
		return ""
	}
	return ansi.Truncate(s, w, "…")
}

// FirstFit returns the first of forms (a text's long to short wordings)
// that fits in w cells, else the last one cut to w.
func FirstFit(w int, forms ...string) string {
	for _, f := range forms {
		if ansi.StringWidth(f) <= w {
			return f
		}
	}
	if len(forms) == 0 {
		return ""
	}
	return Truncate(forms[len(forms)-1], w)
}

// Spaces returns n spaces ("" for n <= 0).
func Spaces(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat(" ", n)
}

// Wrap folds plain or styled text to w cells; w < 1 leaves it as it is.
func Wrap(s string, w int) string {
	if w < 1 {
		return s
	}
	return ansi.Wrap(s, w, "")
}

// Hang writes prefix, then text wrapped to the w-cell width that is left,
// with continuation lines indented under the text (a bullet list item, a
// "label: value" line).
func Hang(prefix, text string, w int) string {
	pw := ansi.StringWidth(prefix)
	lines := strings.Split(Wrap(text, max(w-pw, 10)), "\n")
	return prefix + strings.Join(lines, "\n"+Spaces(pw))
}

// Indent puts pad before every line of s.
func Indent(s, pad string) string {
	if pad == "" {
		return s
	}
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
}

// Clamp folds s (its whitespace collapsed) into at most n lines of w cells,
// ending with an ellipsis when text was left out; n <= 0 means no limit.
func Clamp(s string, w, n int) []string {
	w = max(w, 10)
	lines := strings.Split(ansi.Wordwrap(strings.Join(strings.Fields(s), " "), w, ""), "\n")
	if n > 0 && len(lines) > n {
		lines = lines[:n]
		lines[n-1] = ansi.Truncate(lines[n-1], w-1, "") + "…"
	}
	for i, l := range lines {
		lines[i] = Truncate(l, w)
	}
	return lines
}

// Fit pads or cuts s to exactly h lines of at most w cells, so the chrome
// below a screen stays in place and nothing overflows.
func Fit(s string, w, h int) string {
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

// Box is Fit that also pads every line to w cells, so blocks line up side
// by side.
func Box(s string, w, h int) string {
	lines := strings.Split(Fit(s, w, h), "\n")
	for i, l := range lines {
		lines[i] = l + Spaces(w-ansi.StringWidth(l))
	}
	return strings.Join(lines, "\n")
}

// Block is one column for Columns.
type Block struct {
	Text string
	W    int
}

// Columns puts blocks side by side, each fitted to its width and h lines,
// joined by sep. It is lipgloss.JoinHorizontal for blocks whose sizes are
// known, measuring each line once.
func Columns(h int, sep string, blocks ...Block) string {
	split := make([][]string, len(blocks))
	for i, b := range blocks {
		split[i] = strings.Split(Fit(b.Text, b.W, h), "\n")
	}
	var out strings.Builder
	for row := range h {
		for i, b := range blocks {
			line := split[i][row]
			out.WriteString(line)
			if i < len(blocks)-1 {
				out.WriteString(Spaces(b.W - ansi.StringWidth(line)))
				out.WriteString(sep)
			}
		}
		if row < h-1 {
			out.WriteByte('\n')
		}
	}
	return out.String()
}

// Window returns h lines of lines from offset: the visible part of a
// scrolled text, without a viewport's own rendering.
func Window(lines []string, offset, h int) string {
	offset = max(min(offset, len(lines)-h), 0)
	end := min(offset+h, len(lines))
	return strings.Join(lines[offset:end], "\n")
}

// Reflow joins the lines of each paragraph of a text written over several
// YAML lines, so it wraps to the screen rather than to the file.
// Paragraphs that look laid out by hand (indented, lists, code, tables)
// are kept as they are.
func Reflow(s string) string {
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

// codeSpan is Markdown inline code: text between single backticks.
var codeSpan = regexp.MustCompile("`([^`\n]+)`")

// Inline drops the backticks around Markdown inline code in text shown
// as plain text (question prompts, options), keeping the code itself.
func Inline(s string) string { return codeSpan.ReplaceAllString(s, "$1") }
