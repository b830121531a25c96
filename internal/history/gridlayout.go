package history

import (
	"fmt"
	"path"
	"strings"

	"github.com/ownership-election/playground/internal/sanitize"
)

// The coverage grid of an exploration (call sites down, fault kinds
// across) as text, laid out the same by the lab screen and the CLI.

// GridColumn is the width of a fault kind's column: its name or a
// cell's word ("held", "VIOL", "both", "once"), whichever is longer, and
// a space; a column no wider than it needs leaves the call sites room at
// 80 columns as kinds are added.
func GridColumn(k FaultAt) int { return max(len(k), 4) + 1 }

// GridSiteRoom is the least width the call sites' column should have:
// "fenced.go:31 Txn newcomer" and a space.
const GridSiteRoom = 28

// GridLabels names the grid's rows, each a call site ("file:line") with
// its RPC and the role that reached it (the sites' Where, RPC and Role;
// their cells are not read), and the column's title. When every site is
// in one file, the title names it once and a row begins with its line
// ("97 LeaseKeepAlive owner"), which keeps the role in the column at 80
// columns; else a row begins with "file:line". Safe to print: the file's
// name comes from a learner's folder.
func GridLabels(sites []Site) (title string, labels []string) {
	files := map[string]bool{}
	for _, s := range sites {
		files[gridFile(s.Where)] = true
	}
	one := len(files) == 1
	title = "call site, role"
	if one {
		title = sanitize.Line(gridFile(sites[0].Where)) + ": line, RPC, role"
	}
	for _, s := range sites {
		at := path.Base(s.Where)
		if one {
			at = strings.TrimPrefix(at, gridFile(s.Where)+":")
		}
		labels = append(labels, sanitize.Line(at+" "+s.RPC+" "+s.Role))
	}
	return title, labels
}

// gridFile is the file's name in a "file:line".
func gridFile(where string) string {
	b := path.Base(where)
	if i := strings.LastIndex(b, ":"); i >= 0 {
		return b[:i]
	}
	return b
}

// GridHeading lays out the grid's columns in w: each kind's column as
// wide as its name on one heading line when the call sites keep
// GridSiteRoom; else every column as narrow as a cell's word, the kinds'
// names on two heading lines, every other one on each, so that each name
// may run on over the column beside it. title heads the call sites'
// column (GridLabels').
func GridHeading(kinds []FaultAt, w int, title string) (width func(i int) int, siteW int, head []string) {
	wide := 0
	for _, k := range kinds {
		wide += GridColumn(k)
	}
	if w-wide >= GridSiteRoom {
		siteW = w - wide
		line := fmt.Sprintf("%-*s", siteW, gridTitle(title, siteW))
		for _, k := range kinds {
			line += fmt.Sprintf("%-*s", GridColumn(k), k)
		}
		return func(i int) int {
			if i < len(kinds) {
				return GridColumn(kinds[i])
			}
			return GridColumn("")
		}, siteW, []string{line}
	}
	narrow := GridColumn("")
	over := 0 // how far the last names run past the last column
	for i, k := range kinds {
		over = max(over, len(k)-narrow*(len(kinds)-i))
	}
	siteW = max(w-narrow*len(kinds)-over, 12)
	first, second := fmt.Sprintf("%-*s", siteW, gridTitle(title, siteW)), strings.Repeat(" ", siteW+narrow)
	for i, k := range kinds {
		if i%2 == 0 {
			first += fmt.Sprintf("%-*s", 2*narrow, k)
		} else {
			second += fmt.Sprintf("%-*s", 2*narrow, k)
		}
	}
	return func(int) int { return narrow }, siteW, []string{strings.TrimRight(first, " "), strings.TrimRight(second, " ")}
}

// gridTitle is the title cut to the column, a space kept after it.
func gridTitle(title string, siteW int) string {
	if r := []rune(title); len(r) > siteW-1 {
		return string(r[:siteW-2]) + "…"
	}
	return title
}
