package theme

import (
	"regexp"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// listItem matches the start of a rendered list item: its indent and its
// bullet or number.
var listItem = regexp.MustCompile(`^( *)(• |\d+\. )`)

// hangListItems re-wraps the list items of glamour's output so their
// continuation lines hang under the item's text, at the width paragraphs
// get. glamour folds an item's text back to the bullet's column, and an
// item with inline code breaks short of the margin.
func hangListItems(out string, width int) string {
	lines := strings.Split(out, "\n")
	var res []string
	for i := 0; i < len(lines); i++ {
		plain := ansi.Strip(lines[i])
		m := listItem.FindStringSubmatch(plain)
		if m == nil {
			res = append(res, lines[i])
			continue
		}
		indent, prefixW := len(m[1]), len(m[1])+ansi.StringWidth(m[2])
		// The item's text: the first line after its bullet, then every
		// following line at the bullet's own indent that starts no item.
		parts := []string{trimRight(ansi.TruncateLeft(lines[i], prefixW, ""))}
		j := i + 1
		for ; j < len(lines); j++ {
			p := ansi.Strip(lines[j])
			if strings.TrimSpace(p) == "" || len(p) <= indent || strings.TrimLeft(p[:indent], " ") != "" ||
				p[indent] == ' ' || listItem.MatchString(p) {
				break
			}
			parts = append(parts, trimRight(ansi.TruncateLeft(lines[j], indent, "")))
		}
		if j == i+1 {
			res = append(res, lines[i])
			continue
		}
		textW := max(width-2-prefixW, 10)
		wrapped := strings.Split(ansi.Wordwrap(strings.Join(parts, " "), textW, ""), "\n")
		res = append(res, ansi.Truncate(lines[i], prefixW, "")+wrapped[0])
		for _, w := range wrapped[1:] {
			res = append(res, strings.Repeat(" ", prefixW)+w)
		}
		i = j - 1
	}
	return strings.Join(res, "\n")
}

// trimRight drops the padding glamour puts after a line's text.
func trimRight(s string) string {
	w := ansi.StringWidth(strings.TrimRight(ansi.Strip(s), " \u00a0"))
	return ansi.Truncate(s, w, "")
}
