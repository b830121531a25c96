package text

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// CutWords and ClampWords cut lines between words, never inside one: a
// cut word reads as a different word ("token 1…" for token 12). The
// experiment screen and the timeline lay out their lines with them.

// CutWords fits plain text s in w cells: whole, or cut after its last
// word that leaves room for "…".
func CutWords(s string, w int) string {
	if ansi.StringWidth(s) <= w {
		return s
	}
	if w <= 1 {
		return ansi.Truncate(s, w, "")
	}
	head := ansi.Truncate(s, w-1, "")
	if i := strings.LastIndexByte(head, ' '); i > 0 && ansi.StringWidth(head[:i]) >= w/3 {
		head = strings.TrimRight(head[:i], " ·,:;")
	}
	return head + "…"
}

// ClampWords folds plain text s (whitespace collapsed) into at most n
// lines of w cells (n <= 0: as many as it takes), the last ending in "…"
// after a whole word when text was left out.
func ClampWords(s string, w, n int) []string {
	w = max(w, 10)
	lines := wrapWords(strings.Fields(s), w)
	for i, l := range lines {
		if ansi.StringWidth(l) > w { // one word longer than the line
			lines[i] = ansi.Truncate(l, w, "")
		}
	}
	if n <= 0 || len(lines) <= n {
		return lines
	}
	lines = lines[:n]
	if last := lines[n-1]; ansi.StringWidth(last)+2 <= w {
		lines[n-1] = last + " …"
	} else {
		lines[n-1] = CutWords(last+" …", w)
	}
	return lines
}

// wrapWords lays words out in lines of at most w cells, breaking only
// between them (not at a hyphen: "lock-versioned" is one key's name).
func wrapWords(words []string, w int) []string {
	var lines []string
	line := ""
	for _, word := range words {
		switch {
		case line == "":
			line = word
		case ansi.StringWidth(line)+1+ansi.StringWidth(word) <= w:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	return append(lines, line)
}
