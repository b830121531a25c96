package experiment

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Lines on this screen are cut between words, never inside one: a cut
// word reads as a different word ("token 1…" for token 12).

// cutWords fits plain text s in w cells: whole, or cut after its last
// word that leaves room for "…".
func cutWords(s string, w int) string {
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

// clampWords folds plain text s (whitespace collapsed) into at most n
// lines of w cells (n <= 0: as many as it takes), the last ending in "…"
// after a whole word when text was left out.
func clampWords(s string, w, n int) []string {
	w = max(w, 10)
	lines := strings.Split(ansi.Wordwrap(strings.Join(strings.Fields(s), " "), w, ""), "\n")
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
		lines[n-1] = cutWords(last+" …", w)
	}
	return lines
}
