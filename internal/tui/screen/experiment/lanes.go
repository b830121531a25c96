package experiment

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/tui/text"
)

// The lanes: a row per replica and one for etcd, a column per timeline
// item, and a ruler with the cursor under them. A replica's row shows
// what it believed (owner ━, not owner ─, paused ▒, cut off ░, crashed ×,
// the token it won, ✓ accepted and ✗ refused writes, ! a violation); the
// etcd row shows who etcd held as owner (━, with the holder's name where
// it changes; · when it held nobody) and when a member was down (▒). The
// label before each row is the state at the cursor: belief in the
// replica rows, etcd's truth in its own.

// legend explains the lanes' marks, long to short.
var legend = []string{
	"━ owner  ─ not owner  ▒ paused  ░ cut off  × crashed  ✓ write accepted  ✗ refused  ! violation",
	"━ owner ─ other ▒ paused ░ cut off × crashed ✓ accepted ✗ refused ! violation",
}

// laneRow is one lane: its label at the cursor and a mark per column.
type laneRow struct {
	label string
	cells []string
}

// window is the items the lanes show in width cols, around cursor cur:
// the cursor stays in view with a quarter of the width after it while
// there is more to see.
func window(n, cur, cols int) (first, last int) {
	if n <= cols {
		return 0, n
	}
	ahead := min(cols/4, n-1-cur)
	first = max(0, min(cur-(cols-1-ahead), n-cols))
	return first, first + cols
}

// replicaCells is lane l's marks for items first..last-1.
func replicaCells(tl timeline, l, first, last int) []string {
	cells := make([]string, 0, last-first)
	for i := first; i < last; i++ {
		cells = append(cells, replicaMark(tl.states[i][l], tl.at(i)))
	}
	// The token a term was won with, over the term's first cells.
	for i := first; i < last; i++ {
		s := tl.states[i][l]
		if !s.acquired {
			continue
		}
		writeOver(cells[i-first:], fmt.Sprint(s.token), "━")
	}
	return cells
}

// replicaMark is the mark of a replica in state s at time t.
func replicaMark(s belief, t time.Duration) string {
	switch {
	case !s.seen || s.gone:
		return " "
	case s.violated:
		return "!"
	case s.refused:
		return "✗"
	case s.wrote:
		return "✓"
	case s.acquired:
		return "◆" // the token's digits replace it where they fit
	case s.crashed:
		return "×"
	case s.paused:
		return "▒"
	case s.cut || t < s.stalledUntil:
		return "░"
	case s.role == experiment.RoleOwner:
		return "━"
	}
	return "─"
}

// writeOver writes word over the first cells, when cells after the
// first that it needs are all plain (fill): a token or a holder's name
// where its term starts.
func writeOver(cells []string, word, fill string) {
	rs := []rune(word)
	if len(rs) > len(cells) {
		return
	}
	for j := 1; j < len(rs); j++ {
		if cells[j] != fill {
			return
		}
	}
	for j, r := range rs {
		cells[j] = string(r)
	}
}

// etcdCells is the etcd lane's marks for items first..last-1.
func etcdCells(tl timeline, first, last int) []string {
	cells := make([]string, 0, last-first)
	for i := first; i < last; i++ {
		h := tl.holds[i]
		switch {
		case h.down > 0:
			cells = append(cells, "▒")
		case h.holder == "":
			cells = append(cells, "·")
		default:
			cells = append(cells, "━")
		}
	}
	for i := first; i < last; i++ {
		h := tl.holds[i]
		if h.holder != "" && (i == 0 || tl.holds[i-1].holder != h.holder) {
			writeOver(cells[i-first:], h.holder, "━")
		}
	}
	return cells
}

// rulerCells marks the script's steps (|) and the cursor (▲ and its
// time) under the lanes.
func rulerCells(tl timeline, first, last, cur int) []string {
	cells := make([]string, last-first)
	for i := first; i < last; i++ {
		cells[i-first] = " "
		if tl.items[i].fold == nil && tl.events[tl.items[i].first].Kind == experiment.Phase {
			cells[i-first] = "|"
		}
	}
	at := []rune(fmt.Sprintf("%.2fs", tl.at(cur).Seconds()))
	c := cur - first
	cells[c] = "▲"
	start := c + 1
	if start+len(at) > len(cells) {
		start = c - len(at)
	}
	if start >= 0 {
		for j, r := range at {
			cells[start+j] = string(r)
		}
	}
	return cells
}

// renderLanes lays rows out as label, space, marks, in w cells.
func renderLanes(rows []laneRow, w int) []string {
	labelW := 0
	for _, r := range rows {
		labelW = max(labelW, ansi.StringWidth(r.label))
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		line := r.label + text.Spaces(labelW-ansi.StringWidth(r.label)) + " " + strings.Join(r.cells, "")
		out[i] = strings.TrimRight(ansi.Truncate(line, w, ""), " ")
	}
	return out
}

// labelWidth is the width the lanes give their labels at screen width w:
// a fifth, or more on a wide screen, which has room for long labels.
func labelWidth(w int) int {
	if w >= 150 {
		return 60
	}
	if w >= 110 {
		return 30
	}
	return 26
}
