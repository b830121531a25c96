package theme

import "strings"

// TabWidth is the tab stop used when Markdown is shown on screen.
const TabWidth = 4

// ExpandTabs replaces tabs in Markdown with spaces up to the next tab stop,
// line by line. glamour passes tabs through to its output, and the
// terminal renderer draws a tab as nothing, so Go code in a lesson (gofmt
// indents with tabs) lost all its indentation. Expand before rendering.
func ExpandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 64)
	col := 0
	for _, r := range s {
		switch r {
		case '\t':
			n := TabWidth - col%TabWidth
			b.WriteString(strings.Repeat(" ", n))
			col += n
		case '\n':
			b.WriteRune(r)
			col = 0
		default:
			b.WriteRune(r)
			col++
		}
	}
	return b.String()
}
