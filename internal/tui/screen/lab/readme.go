package lab

import (
	"regexp"
	"strings"
)

// blockStart matches a line that begins a Markdown block of its own, which
// must never be glued to the line before it.
var blockStart = regexp.MustCompile(`^(#{1,6}\s|[-*+]\s|\d+[.)]\s|>|\||<|` + "```" + `|~~~|---|===)`)

// unwrapMarkdown joins the hard-wrapped lines of paragraphs and list items
// into one line each. Glamour keeps a list item's source line breaks and
// then wraps again to the pane width, which leaves ragged half-empty
// lines; joined text wraps cleanly. Code blocks, tables, headings and
// explicit line breaks are left alone.
func unwrapMarkdown(src string) string {
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	var out []string
	fence := ""   // the fence that opened the code block we are in
	open := false // the last output line is text that may continue
	for _, l := range lines {
		trimmed := strings.TrimSpace(l)
		if fence != "" {
			out = append(out, l)
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			out = append(out, l)
			open = false
			continue
		}
		switch {
		case trimmed == "":
			out = append(out, l)
			open = false
		case open && !blockStart.MatchString(trimmed):
			// A lazy continuation line: indented code cannot interrupt a
			// paragraph, so even a deep indent continues the text.
			prev := out[len(out)-1]
			out[len(out)-1] = prev + " " + trimmed
			open = !hardBreak(l)
		default:
			out = append(out, l)
			open = !strings.HasPrefix(l, "    ") && !strings.HasPrefix(trimmed, "#") &&
				!strings.HasPrefix(trimmed, "|") && !strings.HasPrefix(trimmed, "<") && !hardBreak(l)
		}
	}
	return strings.Join(out, "\n")
}

// hardBreak is a Markdown explicit line break: two trailing spaces or a
// backslash.
func hardBreak(l string) bool {
	return strings.HasSuffix(l, "  ") || strings.HasSuffix(l, "\\")
}
