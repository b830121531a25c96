package history

import (
	"fmt"
	"strings"
)

// The coverage grid of an exploration (call sites down, fault kinds
// across) as text, laid out the same by the lab screen and the CLI.

// GridColumn is the width of a fault kind's column: its name or a
// cell's word ("held", "VIOL", "both", "once"), whichever is longer, and
// a space; a column no wider than it needs leaves the call sites room at
// 80 columns as kinds are added.
func GridColumn(k FaultAt) int { return max(len(k), 4) + 1 }

// GridSiteRoom is the least width the call sites' column should have:
// "fenced.go:31 Txn [newcomer]" and a space.
const GridSiteRoom = 28

// GridHeading lays out the grid's columns in w: each kind's column as
// wide as its name on one heading line when the call sites keep
// GridSiteRoom; else every column as narrow as a cell's word, the kinds'
// names on two heading lines, every other one on each, so that each name
// may run on over the column beside it.
func GridHeading(kinds []FaultAt, w int) (width func(i int) int, siteW int, head []string) {
	wide := 0
	for _, k := range kinds {
		wide += GridColumn(k)
	}
	if w-wide >= GridSiteRoom {
		siteW = w - wide
		line := fmt.Sprintf("%-*s", siteW, "call site [role]")
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
	first, second := fmt.Sprintf("%-*s", siteW, "call site [role]"), strings.Repeat(" ", siteW+narrow)
	for i, k := range kinds {
		if i%2 == 0 {
			first += fmt.Sprintf("%-*s", 2*narrow, k)
		} else {
			second += fmt.Sprintf("%-*s", 2*narrow, k)
		}
	}
	return func(int) int { return narrow }, siteW, []string{strings.TrimRight(first, " "), strings.TrimRight(second, " ")}
}
